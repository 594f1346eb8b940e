// The service's page script: submit form, tournament list refresh, and the live tournament view.
// Hand-written, no library, no build step. Every foreign string reaches the page through
// textContent or an attribute set by name, never through innerHTML.
"use strict";

(function () {
  const TOKEN_KEY = "cecp-runner-token";
  const SVG_NS = "http://www.w3.org/2000/svg";
  const PIECES = { k: "\u265A", q: "\u265B", r: "\u265C", b: "\u265D", n: "\u265E", p: "\u265F" };
  const STILL_PLAYING = ["queued", "running", "stopping"];
  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b"];

  // -- small helpers ------------------------------------------------------------------------

  function $(id) { return document.getElementById(id); }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
    if (text !== undefined) node.textContent = String(text);
    return node;
  }

  function fixed(value, digits) {
    return typeof value === "number" && isFinite(value) ? value.toFixed(digits) : "";
  }

  function signed(value, digits) {
    const text = fixed(value, digits);
    return text && value >= 0 ? "+" + text : text;
  }

  function when(text) { return text ? String(text).replace("T", " ").slice(0, 19) : ""; }

  function token() { return ($("token") && $("token").value.trim()) || sessionStorage.getItem(TOKEN_KEY) || ""; }

  function authHeaders() {
    const value = token();
    return value ? { Authorization: "Bearer " + value } : {};
  }

  function wireToken(onChange) {
    const input = $("token");
    if (!input) return;
    input.value = sessionStorage.getItem(TOKEN_KEY) || "";
    input.addEventListener("change", function () {
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      if (onChange) onChange();
    });
  }

  // The API's error body as lines: 422 gives [{key, value, message}], others a string.
  async function problemLines(response) {
    let body = null;
    try { body = await response.json(); } catch (e) { return [response.status + " " + response.statusText]; }
    const detail = body && body.detail !== undefined ? body.detail : body;
    if (Array.isArray(detail)) {
      return detail.map(function (p) {
        if (p && typeof p === "object") {
          const key = p.key || (Array.isArray(p.loc) ? p.loc.join(".") : "");
          const message = p.message || p.msg || JSON.stringify(p);
          return key ? key + ": " + message : message;
        }
        return String(p);
      });
    }
    return [typeof detail === "string" ? detail : JSON.stringify(detail)];
  }

  function showStatus(node, text, isError) {
    node.textContent = text;
    node.classList.toggle("error", Boolean(isError));
  }

  // -- the list page ------------------------------------------------------------------------

  function listRow(t) {
    const row = el("tr");
    row.dataset.id = t.id;
    row.append(el("td", "num", t.id));
    const name = el("td");
    const link = el("a", "", t.name);
    link.href = "/tournaments/" + encodeURIComponent(t.id);
    name.append(link);
    row.append(name);
    const status = el("td");
    status.append(el("span", "status status-" + t.status, t.status));
    row.append(status);
    const progress = el("td");
    const bar = el("progress");
    bar.max = t.total_games || 1;
    bar.value = t.done_games || 0;
    progress.append(bar, " " + (t.done_games || 0) + " / " + (t.total_games || 0));
    row.append(progress, el("td", "", when(t.created_at)), el("td", "", when(t.finished_at)));
    return row;
  }

  async function refreshList() {
    const response = await fetch("/api/tournaments", { headers: authHeaders() });
    if (!response.ok) return;
    const data = await response.json();
    const tbody = $("tournaments").tBodies[0];
    tbody.replaceChildren.apply(tbody, data.tournaments.map(listRow));
    $("no-tournaments").hidden = data.tournaments.length > 0;
    if ($("list-note")) $("list-note").hidden = true;
  }

  async function submitTournament(event) {
    event.preventDefault();
    const status = $("submit-status");
    const problems = $("problems");
    problems.replaceChildren();
    sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
    showStatus(status, "Submitting...", false);
    let response;
    try {
      response = await fetch("/api/tournaments", {
        method: "POST",
        headers: Object.assign({ "Content-Type": "application/toml" }, authHeaders()),
        body: $("config").value,
      });
    } catch (e) {
      showStatus(status, "The service did not answer: " + e, true);
      return;
    }
    if (response.status === 201) {
      const created = await response.json();
      showStatus(status, "Tournament " + created.id + " accepted.", false);
      window.location.assign("/tournaments/" + encodeURIComponent(created.id));
      return;
    }
    const lines = await problemLines(response);
    const why = response.status === 401 ? "The token was refused (401)."
      : response.status === 422 ? "The configuration was refused (422):"
      : "Refused (" + response.status + "):";
    showStatus(status, why, true);
    for (const line of lines) problems.append(el("li", "", line));
  }

  function startIndex() {
    const protectedReads = document.body.dataset.protected === "true";
    wireToken(protectedReads ? refreshList : null);
    $("submit-form").addEventListener("submit", submitTournament);
    if (protectedReads && !token()) return;
    refreshList().catch(function () {});
    setInterval(function () {
      if (!document.hidden) refreshList().catch(function () {});
    }, 5000);
  }

  // -- boards -------------------------------------------------------------------------------

  function squareName(file, rank) { return "abcdefgh"[file] + String(rank + 1); }

  function buildBoard() {
    const grid = el("div", "board");
    for (let rank = 7; rank >= 0; rank--) {
      for (let file = 0; file < 8; file++) {
        const sq = el("div", "sq " + ((file + rank) % 2 === 0 ? "dark" : "light"));
        sq.dataset.square = squareName(file, rank);
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
      this.white.name.textContent = "\u2659 " + (game.white || "?");
      this.black.name.textContent = "\u265F " + (game.black || "?");
      this.card.dataset.fen = game.fen || "";
      this.card.dataset.ply = game.ply || 0;
      drawPosition(this.grid, game.fen);
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
      emptyPlot(container, "no finished game yet");
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
  }

  // -- the tournament page --------------------------------------------------------------------

  function drawStandings(report) {
    const tbody = $("standings").tBodies[0];
    const rows = ((report && report.standings) || []).map(function (s) {
      const row = el("tr");
      const elo = s.reference ? "ref" : (typeof s.elo === "number"
        ? signed(s.elo, 1) + (typeof s.elo_error95 === "number" ? " \u00b1 " + fixed(s.elo_error95, 1) : "") : "");
      const cells = [[s.rank, "num"], [s.engine, ""], [s.games, "num"], [s.points, "num"],
        [typeof s.score === "number" ? fixed(100 * s.score, 1) + "%" : "", "num"], [s.wins, "num"],
        [s.draws, "num"], [s.losses, "num"], [elo, "num"],
        [typeof s.los === "number" ? fixed(100 * s.los, 1) + "%" : "", "num"]];
      for (const [value, cls] of cells) row.append(el("td", cls, value));
      return row;
    });
    tbody.replaceChildren.apply(tbody, rows);
    const sprt = report && report.sprt;
    let text = "";
    if (sprt) {
      text = "SPRT [" + sprt.elo0 + ", " + sprt.elo1 + "]: " + (typeof sprt.llr === "number"
        ? "LLR " + fixed(sprt.llr, 2) + " (" + fixed(sprt.lower_bound, 2) + ", " + fixed(sprt.upper_bound, 2) + "), " + sprt.decision
        : "no game yet");
    }
    $("sprt").textContent = text;
    drawElo($("elo-plot"), report && report.series);
    if (report && report.series && report.series.elo_kind) $("elo-caption").textContent = report.series.elo_kind + " (95% band)";
    drawLlr($("llr-plot"), report && report.series, sprt);
  }

  class TournamentView {
    constructor(id) {
      this.id = id;
      this.boards = new Map();
      this.finishedSeen = new Set();
      for (const row of $("finished").tBodies[0].rows) this.finishedSeen.add(Number(row.dataset.index));
      this.stream = null;
      setInterval(this.tick.bind(this), 200);
    }

    tick() {
      const now = performance.now();
      for (const board of this.boards.values()) board.tick(now);
    }

    setStatus(status) {
      const badge = $("t-status");
      badge.textContent = status || "";
      badge.className = "status status-" + (status || "unknown");
    }

    setProgress(done, total) {
      if (typeof total === "number") $("t-progress").max = total || 1;
      if (typeof done === "number") $("t-progress").value = done;
      $("t-games").textContent = (done || 0) + " of " + (total || 0) + " games";
    }

    boardFor(game) {
      let board = this.boards.get(game.index);
      if (!board) {
        board = new BoardView(game);
        this.boards.set(game.index, board);
        $("boards").append(board.card);
      } else {
        board.update(game);
      }
      $("no-games").hidden = true;
      return board;
    }

    removeBoard(index) {
      const board = this.boards.get(index);
      if (!board) return;
      board.card.remove();
      this.boards.delete(index);
      $("no-games").hidden = this.boards.size > 0;
    }

    snapshot(detail) {
      $("t-name").textContent = detail.name;
      document.title = detail.name + " - cecp-runner";
      this.setStatus(detail.status);
      this.setProgress(detail.done_games, detail.total_games);
      drawStandings(detail.report);
      for (const index of Array.from(this.boards.keys())) this.removeBoard(index);
      for (const game of detail.games || []) this.boardFor(game);
      $("no-games").hidden = this.boards.size > 0;
      // A finished tournament's stream has nothing more to say: do not reconnect to it.
      if (detail.status === "finished") this.close();
    }

    status(status) {
      this.setStatus(status);
      if (!STILL_PLAYING.includes(status)) {
        // no game goes on (an abort ends games without a result): the boards go too
        for (const [index, board] of Array.from(this.boards.entries())) {
          if (!board.finished) this.removeBoard(index);
        }
      }
    }

    move(move) {
      const board = this.boards.get(move.index);
      if (board && typeof board.game.ply === "number" && move.ply <= board.game.ply) return;  // seen already
      this.boardFor(move);
    }

    gameFinished(result) {
      const board = this.boards.get(result.index);
      if (board) {
        board.finish(result);
        setTimeout(() => { if (this.boards.get(result.index) === board) this.removeBoard(result.index); }, 3000);
      }
      if (this.finishedSeen.has(Number(result.index))) return;
      this.finishedSeen.add(Number(result.index));
      const row = el("tr");
      row.dataset.index = result.index;
      for (const [value, cls] of [[Number(result.index) + 1, "num"], [result.round, "num"], [result.white, ""], [result.black, ""],
        [result.result, ""], [(result.termination || "") + (result.reason ? ": " + result.reason : ""), ""],
        [result.plies, "num"]]) {
        row.append(el("td", cls, value));
      }
      const tbody = $("finished").tBodies[0];
      tbody.prepend(row);
      const limit = Number($("finished").dataset.rows) || 200;
      while (tbody.rows.length > limit) tbody.lastElementChild.remove();
    }

    notice(text) {
      const item = el("li", "", new Date().toLocaleTimeString() + "  " + text);
      $("notices").prepend(item);
    }

    handle(type, data) {
      switch (type) {
        case "snapshot": this.snapshot(data); break;
        case "game_started": this.boardFor(data); break;
        case "move": this.move(data); break;
        case "game_finished": this.gameFinished(data); break;
        case "standings": drawStandings(data.report); this.setProgress(data.done_games, data.total_games); break;
        case "notice": this.notice(data.text); break;
        case "status": this.status(data.status); break;
        case "tournament_finished":
          this.status(data.status);
          this.notice("Tournament " + data.status + (data.sprt_decision ? " (SPRT: " + data.sprt_decision + ")" : ""));
          if (data.status === "finished") this.close();
          break;
        default: break;
      }
    }

    connection(text, live) {
      $("t-conn").textContent = text;
      $("t-conn").classList.toggle("live", Boolean(live));
    }

    close() {
      this.closed = true;
      if (this.stream) this.stream.close();
      this.connection("finished", false);
    }

    // Open reads: EventSource, which reconnects by itself and sends Last-Event-ID.
    openEventSource() {
      const url = "/api/tournaments/" + encodeURIComponent(this.id) + "/events";
      const source = new EventSource(url);
      this.stream = source;
      const types = ["snapshot", "game_started", "move", "game_finished", "standings", "notice", "status",
        "tournament_finished"];
      for (const type of types) {
        source.addEventListener(type, (event) => {
          let data;
          try { data = JSON.parse(event.data); } catch (e) { return; }
          this.handle(type, data);
        });
      }
      source.onopen = () => this.connection("live", true);
      source.onerror = () => { if (!this.closed) this.connection("reconnecting...", false); };
    }

    // Protected reads: EventSource cannot send a header, so read the stream with fetch and
    // keep Last-Event-ID and the reconnection ourselves.
    openFetchStream() {
      const url = "/api/tournaments/" + encodeURIComponent(this.id) + "/events";
      const controller = new AbortController();
      let stopped = false;
      this.stream = { close: function () { stopped = true; controller.abort(); } };
      const seen = { lastId: null };  // kept across reconnections, even when a read breaks
      const run = async () => {
        while (!stopped && !this.closed) {
          try {
            const headers = authHeaders();
            if (seen.lastId !== null) headers["Last-Event-ID"] = seen.lastId;
            const response = await fetch(url, { headers: headers, signal: controller.signal });
            if (response.status === 401 || response.status === 403) {
              this.connection("enter the token to watch", false);
              return;
            }
            if (response.status === 404) { this.connection("no such tournament", false); return; }
            if (!response.ok || !response.body) throw new Error("HTTP " + response.status);
            this.connection("live", true);
            await this.readEvents(response.body, seen);
          } catch (e) {
            if (stopped || this.closed) return;
          }
          if (stopped || this.closed) return;
          this.connection("reconnecting...", false);
          await new Promise(function (resolve) { setTimeout(resolve, 2000); });
        }
      };
      run();
    }

    // Parse a text/event-stream body, handling each event; `seen.lastId` follows the ids.
    async readEvents(body, seen) {
      const reader = body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "", carry = "", type = "", data = [];
      for (;;) {
        const chunk = await reader.read();
        if (chunk.done) return;
        let text = carry + chunk.value;
        carry = text.endsWith("\r") ? "\r" : "";  // a CR LF may be split between chunks
        if (carry) text = text.slice(0, -1);
        buffer += text.replace(/\r\n?/g, "\n");
        let end;
        while ((end = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          if (line === "") {
            if (data.length) {
              let parsed = null;
              try { parsed = JSON.parse(data.join("\n")); } catch (e) { parsed = null; }
              if (parsed !== null) this.handle(type || "message", parsed);
            }
            type = ""; data = [];
            continue;
          }
          if (line.startsWith(":")) continue;
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          let value = colon < 0 ? "" : line.slice(colon + 1);
          if (value.startsWith(" ")) value = value.slice(1);
          if (field === "event") type = value;
          else if (field === "data") data.push(value);
          else if (field === "id" && !value.includes("\0")) seen.lastId = value;
        }
      }
    }

    async act(path, label) {
      const status = $("action-status");
      sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
      const response = await fetch("/api/tournaments/" + encodeURIComponent(this.id) + path,
        { method: "POST", headers: authHeaders() });
      if (response.ok) { showStatus(status, label + ": done.", false); return; }
      const lines = await problemLines(response);
      showStatus(status, label + " refused (" + response.status + "): " + lines.join("; "), true);
    }

    start() {
      const protectedReads = document.body.dataset.protected === "true";
      wireToken(() => { if (protectedReads && this.closed !== true) { if (this.stream) this.stream.close(); this.openFetchStream(); } });
      $("stop").addEventListener("click", () => this.act("/stop", "Stop"));
      $("hard-stop").addEventListener("click", () => this.act("/stop?hard=true", "Abort"));
      $("resume").addEventListener("click", () => this.act("/resume", "Resume"));
      drawElo($("elo-plot"), null);
      drawLlr($("llr-plot"), null, null);
      if (protectedReads) this.openFetchStream(); else this.openEventSource();
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    const page = document.body.dataset.page;
    if (page === "index") startIndex();
    else if (page === "tournament") new TournamentView(document.body.dataset.tournament).start();
  });
})();
