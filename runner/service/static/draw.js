// The service page's drawing: boards that follow a game's FEN, clocks, and the SVG plots.
// Loaded before page.js, which drives it from the event stream; it only builds DOM nodes and
// sets text with textContent, never markup from a string.
"use strict";

window.CecpRunnerDraw = (function () {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PIECES = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"];

  // -- small helpers (page.js uses them too) ----------------------------------------------------

  // Direction controls (embeddings, overrides, isolates, marks) in a name could make the page
  // show something else than what is there: foreign text is shown without them.
  const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
  function plain(text) { return String(text).replace(BIDI_CONTROLS, ""); }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = plain(text);
    return node;
  }

  // A name kept apart from the text around it (its own direction, like <bdi> in the page).
  function bdi(text) { return el("bdi", "", text); }

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = plain(text);
    return node;
  }

  function fixed(value, digits) {
    if (typeof value !== "number" || !isFinite(value)) return "";
    const text = value.toFixed(digits);
    return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;  // no "-0.00"
  }

  function signed(value, digits) {
    const text = fixed(value, digits);
    return text && value >= 0 ? "+" + text : text;
  }

  // -- boards -------------------------------------------------------------------------------

  function squareName(file, rank) { return "abcdefgh"[file] + String(rank + 1); }

  function buildBoard() {
    const grid = el("div", "board");
    grid.setAttribute("role", "img");
    for (let rank = 7; rank >= 0; rank--) {
      for (let file = 0; file < 8; file++) {
        const sq = el("div", "sq " + ((file + rank) % 2 === 0 ? "dark" : "light"));
        sq.dataset.square = squareName(file, rank);
        if (file === 0) sq.dataset.rank = String(rank + 1);  // coordinates, drawn by the CSS
        if (rank === 0) sq.dataset.file = "abcdefgh"[file];
        grid.append(sq);
      }
    }
    return grid;
  }

  // Place the pieces of a FEN's first field on a board built by buildBoard.
  function drawPosition(grid, fen) {
    const rows = String(fen || "").split(" ")[0].split("/");
    const squares = grid.children;
    for (let r = 0; r < 8; r++) {
      let file = 0;
      for (const ch of rows[r] || "8") {
        if (ch >= "1" && ch <= "8") {
          for (let k = 0; k < Number(ch) && file < 8; k++) squares[r * 8 + file++].replaceChildren();
        } else if (file < 8) {
          const piece = PIECES[ch.toLowerCase()];
          const square = squares[r * 8 + file++];
          square.replaceChildren(piece ? el("span", "pc " + (ch === ch.toUpperCase() ? "w" : "b"), piece) : "");
        }
      }
      while (file < 8) squares[r * 8 + file++].replaceChildren();
    }
  }

  function turnOf(fen) { return String(fen || "").split(" ")[1] === "b" ? "b" : "w"; }

  function clockText(seconds) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return "--:--";
    const s = Math.max(0, seconds);
    const minutes = Math.floor(s / 60);
    const rest = s - 60 * minutes;
    return minutes + ":" + (rest < 10 ? "0" : "") + rest.toFixed(1);
  }

  // The mover's score shown from White's point of view ("+0.35", "#3").
  function evalText(game) {
    const mover = turnOf(game.fen) === "w" ? "b" : "w";
    const sign = mover === "w" ? 1 : -1;
    let text;
    if (typeof game.mate === "number" && game.mate !== 0) text = "#" + (sign * game.mate);
    else if (typeof game.score_cp === "number") text = signed(sign * game.score_cp / 100, 2);
    else return "";
    return text + (typeof game.depth === "number" ? " d" + game.depth : "");
  }

  class BoardView {
    constructor(game) {
      this.card = el("div", "board-card");
      this.card.dataset.index = game.index;
      this.title = el("div", "title");
      this.black = this.player();
      this.grid = buildBoard();
      this.white = this.player();
      this.info = el("div", "info");
      this.lastMove = el("span", "last-move");
      this.evaluation = el("span", "eval");
      this.info.append(this.lastMove, this.evaluation);
      this.card.append(this.title, this.black.row, this.grid, this.white.row, this.info);
      this.game = {};
      this.update(game);
    }

    player() {
      const row = el("div", "player");
      const name = el("span", "name");
      const clock = el("span", "clock");
      row.append(name, clock);
      return { row: row, name: name, clock: clock };
    }

    // Merge an event's fields (game_started, move, snapshot game) and redraw.
    update(fields) {
      const game = Object.assign(this.game, fields);
      if (fields.san !== undefined) game.last_move = fields.san;
      if (fields.uci !== undefined) game.last_uci = fields.uci;
      this.receivedAt = performance.now();
      if (typeof fields.moved_at === "number" && fields.san === undefined) {
        // a snapshot's or game_started's clocks are as of moved_at: count the time since then
        const age = Date.now() / 1000 - fields.moved_at;
        if (age > 0 && age < 3600) this.receivedAt -= 1000 * age;
      }
      this.title.textContent = "Game " + (Number(game.index) + 1) + (game.round !== undefined ? " \u00b7 round " + game.round : "");
      this.white.name.replaceChildren("\u2659 ", bdi(game.white || "?"));
      this.black.name.replaceChildren("\u265F ", bdi(game.black || "?"));
      this.card.dataset.fen = game.fen || "";
      this.card.dataset.ply = game.ply || 0;
      drawPosition(this.grid, game.fen);
      this.grid.setAttribute("aria-label", "position " + (game.fen || "unknown"));
      for (const sq of this.grid.querySelectorAll(".sq.last")) sq.classList.remove("last");
      const uci = game.last_uci || "";
      if (uci.length >= 4) {
        for (const name of [uci.slice(0, 2), uci.slice(2, 4)]) {
          const sq = this.grid.querySelector('[data-square="' + name + '"]');
          if (sq) sq.classList.add("last");
        }
      }
      const moveNumber = Math.ceil((game.ply || 0) / 2);
      this.lastMove.textContent = game.last_move ? "Last: " + moveNumber + (turnOf(game.fen) === "b" ? ". " : "... ") + game.last_move : "";
      this.evaluation.textContent = evalText(game) ? "Eval " + evalText(game) : "";
      this.tick(this.receivedAt);
    }

    // Count the side to move's clock down from the last event's value.
    tick(now) {
      const game = this.game;
      const elapsed = this.finished ? 0 : (now - this.receivedAt) / 1000;
      const toMove = turnOf(game.fen);
      for (const [side, view, value] of [["w", this.white, game.white_clock], ["b", this.black, game.black_clock]]) {
        const running = side === toMove && !this.finished;
        const shown = typeof value === "number" && running ? value - elapsed : value;
        view.clock.textContent = clockText(shown);
        view.clock.classList.toggle("to-move", running);
        view.clock.classList.toggle("low", typeof shown === "number" && shown < 10 && running);
      }
    }

    finish(result) {
      this.finished = true;
      this.card.classList.add("done");
      this.tick(performance.now());
      this.lastMove.textContent = "Result: " + (result.result || "?") + (result.termination ? " (" + result.termination + ")" : "");
    }
  }

  // -- plots --------------------------------------------------------------------------------

  function niceTicks(low, high, count) {
    const span = high - low || 1;
    const raw = span / count;
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return s >= raw; });
    const ticks = [];
    for (let v = Math.ceil(low / step) * step; v <= high + 1e-9; v += step) ticks.push(Math.round(v / step) * step);
    return ticks;
  }

  // An empty chart frame with axes scaled to [x0, x1] x [y0, y1]; returns {svg, x, y}.
  function frame(container, x0, x1, y0, y1) {
    const width = 480, height = 220, left = 46, right = 12, top = 10, bottom = 26;
    const svg = svgEl("svg", { viewBox: "0 0 " + width + " " + height, role: "img" });
    const x = function (v) { return left + (v - x0) / ((x1 - x0) || 1) * (width - left - right); };
    const y = function (v) { return top + (y1 - Math.min(Math.max(v, y0), y1)) / ((y1 - y0) || 1) * (height - top - bottom); };
    for (const v of niceTicks(y0, y1, 5)) {
      svg.append(svgEl("line", { class: "grid", x1: left, x2: width - right, y1: y(v), y2: y(v) }));
      svg.append(svgEl("text", { x: left - 4, y: y(v) + 4, "text-anchor": "end" }, v));
    }
    for (const v of niceTicks(x0, x1, 6)) {
      if (v !== Math.round(v)) continue;
      svg.append(svgEl("text", { x: x(v), y: height - 8, "text-anchor": "middle" }, v));
    }
    svg.append(svgEl("line", { class: "axis", x1: left, x2: left, y1: top, y2: height - bottom }));
    svg.append(svgEl("line", { class: "axis", x1: left, x2: width - right, y1: height - bottom, y2: height - bottom }));
    container.replaceChildren(svg);
    return { svg: svg, x: x, y: y, width: width, left: left };
  }

  function emptyPlot(container, text) {
    const svg = svgEl("svg", { viewBox: "0 0 480 220" });
    svg.append(svgEl("text", { class: "empty", x: 240, y: 110, "text-anchor": "middle" }, text));
    container.replaceChildren(svg);
  }

  // A dot per point while there are few (a single point draws no line).
  function dots(svg, points, colour) {
    if (points.length > 40) return;
    for (const [x, y] of points) svg.append(svgEl("circle", { cx: x.toFixed(1), cy: y.toFixed(1), r: 2.5, fill: colour }));
  }

  function pathOf(points) {
    return points.map(function (p, i) { return (i ? "L" : "M") + p[0].toFixed(1) + " " + p[1].toFixed(1); }).join(" ");
  }

  function drawElo(container, series) {
    const lines = (series && series.elo) || [];
    let maxGames = 1, low = -50, high = 50;
    for (const s of lines) {
      s.games.forEach(function (g, i) {
        maxGames = Math.max(maxGames, g);
        const elo = s.elo[i], err = s.elo_error95[i];
        if (typeof elo !== "number") return;
        const e = typeof err === "number" ? err : 0;
        low = Math.min(low, elo - e);
        high = Math.max(high, elo + e);
      });
    }
    if (!lines.some(function (s) { return s.elo.some(function (v) { return typeof v === "number"; }); })) {
      // the report gives no estimate below two games (or pairs): say that, not "no game"
      emptyPlot(container, "no Elo estimate yet: too few games");
      return;
    }
    low = Math.max(low, -800);  // an early sweep's band is huge: keep the scale readable
    high = Math.min(high, 800);
    const f = frame(container, 0, maxGames, low, high);
    f.svg.append(svgEl("line", { class: "zero", x1: f.left, x2: f.width - 12, y1: f.y(0), y2: f.y(0) }));
    lines.forEach(function (s, n) {
      const colour = COLOURS[n % COLOURS.length];
      const upper = [], lower = [], mid = [];
      s.games.forEach(function (g, i) {
        const elo = s.elo[i], err = s.elo_error95[i];
        if (typeof elo !== "number") return;
        mid.push([f.x(g), f.y(elo)]);
        if (typeof err === "number") {
          upper.push([f.x(g), f.y(elo + err)]);
          lower.push([f.x(g), f.y(elo - err)]);
        }
      });
      if (upper.length > 1) {
        f.svg.append(svgEl("path", { class: "band", fill: colour, d: pathOf(upper.concat(lower.reverse())) + " Z" }));
      }
      f.svg.append(svgEl("path", { class: "line", stroke: colour, d: pathOf(mid) }));
      dots(f.svg, mid, colour);
      f.svg.append(svgEl("text", { x: f.left + 8, y: 22 + 14 * n, fill: colour }, s.label));
    });
  }

  function drawLlr(container, series, sprt) {
    if (!sprt) { emptyPlot(container, "this tournament has no SPRT"); return; }
    const llr = (series && series.llr) || { games: [], llr: [] };
    const values = llr.llr.filter(function (v) { return typeof v === "number"; });
    const lowerBound = typeof sprt.lower_bound === "number" ? sprt.lower_bound : -2.94;
    const upperBound = typeof sprt.upper_bound === "number" ? sprt.upper_bound : 2.94;
    const low = Math.min(lowerBound * 1.1, Math.min.apply(null, values.concat([0])));
    const high = Math.max(upperBound * 1.1, Math.max.apply(null, values.concat([0])));
    const maxGames = Math.max(1, Math.max.apply(null, llr.games.concat([0])));
    const f = frame(container, 0, maxGames, low, high);
    for (const [bound, label] of [[lowerBound, "H0"], [upperBound, "H1"]]) {
      f.svg.append(svgEl("line", { class: "bound", x1: f.left, x2: f.width - 12, y1: f.y(bound), y2: f.y(bound) }));
      f.svg.append(svgEl("text", { x: f.width - 16, y: f.y(bound) - 3, "text-anchor": "end" }, label + " " + bound.toFixed(2)));
    }
    f.svg.append(svgEl("line", { class: "zero", x1: f.left, x2: f.width - 12, y1: f.y(0), y2: f.y(0) }));
    const points = [];
    llr.games.forEach(function (g, i) { if (typeof llr.llr[i] === "number") points.push([f.x(g), f.y(llr.llr[i])]); });
    if (points.length) f.svg.append(svgEl("path", { class: "line", stroke: COLOURS[0], d: pathOf(points) }));
    dots(f.svg, points, COLOURS[0]);
  }

  return { el: el, svgEl: svgEl, plain: plain, bdi: bdi, fixed: fixed, signed: signed, BoardView: BoardView,
           drawElo: drawElo, drawLlr: drawLlr, emptyPlot: emptyPlot };
})();
