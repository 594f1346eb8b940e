// The service's page script: submit form, tournament list refresh, and the live tournament view.
// Hand-written, no library, no build step. Every foreign string reaches the page through
// textContent or an attribute set by name, never through innerHTML.
"use strict";

(function () {
  const TOKEN_KEY = "cecp-runner-token";
  const STILL_PLAYING = ["queued", "running", "stopping"];
  const draw = window.CecpRunnerDraw;
  const el = draw.el, plain = draw.plain, bdi = draw.bdi, fixed = draw.fixed, signed = draw.signed;

  // -- small helpers ------------------------------------------------------------------------

  function $(id) { return document.getElementById(id); }

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
    node.textContent = plain(text);
    node.classList.toggle("error", Boolean(isError));
  }

  // -- the list page ------------------------------------------------------------------------

  function listRow(t) {
    const row = el("tr");
    row.dataset.id = t.id;
    row.append(el("td", "num", t.id));
    const name = el("td");
    const link = el("a");
    link.append(bdi(t.name));
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

  // What the form submits: a tournament, a tuning run (runner tune's file) to /api/tunes, or
  // a branch test (a test file's keys) to /api/tests.
  const KINDS = { tournaments: "Tournament ", tunes: "Tuning run ", tests: "Branch test " };
  function submittedKind() {
    const kind = $("kind");
    return kind && Object.hasOwn(KINDS, kind.value) ? kind.value : "tournaments";
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
      response = await fetch("/api/" + submittedKind(), {
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
      const kind = submittedKind();
      showStatus(status, KINDS[kind] + created.id + " accepted.", false);
      window.location.assign("/" + kind + "/" + encodeURIComponent(created.id));
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
    if (!protectedReads || token()) refreshList().catch(function () {});
    setInterval(function () {
      if (!document.hidden) refreshList().catch(function () {});
    }, 5000);
  }

  // -- the tournament page --------------------------------------------------------------------

  function drawStandings(report) {
    const tbody = $("standings").tBodies[0];
    const rows = ((report && report.standings) || []).map(function (s) {
      const row = el("tr");
      // no figure for an engine that played: the sample is too small (n/a, as runner report says)
      const elo = s.reference ? "ref" : (typeof s.elo === "number"
        ? signed(s.elo, 1) + (typeof s.elo_error95 === "number" ? " \u00b1 " + fixed(s.elo_error95, 1) : "")
        : s.games > 0 ? "n/a" : "");
      const cells = [[s.rank, "num"], [s.engine, ""], [s.games, "num"], [s.points, "num"],
        [typeof s.score === "number" ? fixed(100 * s.score, 1) + "%" : "", "num"], [s.wins, "num"],
        [s.draws, "num"], [s.losses, "num"], [elo, "num"],
        [typeof s.los === "number" ? fixed(100 * s.los, 1) + "%" : s.games > 0 && !s.reference ? "n/a" : "", "num"]];
      for (const [value, cls] of cells) {
        const cell = el("td", cls);
        cell.append(cls ? plain(value === undefined || value === null ? "" : value) : bdi(value === undefined || value === null ? "" : value));
        row.append(cell);
      }
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
    draw.drawElo($("elo-plot"), report && report.series);
    if (report && report.series && report.series.elo_kind) $("elo-caption").textContent = plain(report.series.elo_kind) + " (95% band)";  // it names the reference engine
    draw.drawLlr($("llr-plot"), report && report.series, sprt);
  }

  function fillRows(id, entries, cellsOf) {
    // A table of the report's per-engine figures, rebuilt from a standings event's report.
    const tbody = $(id).tBodies[0];
    tbody.replaceChildren.apply(tbody, entries.map(function (entry) {
      const row = el("tr");
      cellsOf(entry).forEach(function (value, index) {
        const cell = el("td", index ? "num" : "");
        cell.append(index ? plain(value === undefined || value === null ? "" : value) : bdi(value));
        row.append(cell);
      });
      return row;
    }));
  }

  function drawDiagnostics(report) {
    const num = function (value, digits, unit) {
      return typeof value === "number" ? fixed(value, digits) + (unit || "") : "";
    };
    fillRows("search", (report && report.search) || [], function (e) {
      return [e.engine, e.moves, num(e.mean_depth, 1), num(e.mean_seldepth, 1),
        typeof e.nps === "number" ? Math.round(e.nps).toLocaleString("en-US") : "",
        num(e.mean_time_ms, 0, " ms"),
        typeof e.mean_time_share === "number" ? fixed(100 * e.mean_time_share, 1) + "%" : "",
        typeof e.least_left_ms === "number" ? fixed(e.least_left_ms / 1000, 3) + " s" : "",
        e.near_flag,
        typeof e.ponder_hit_rate === "number" ? fixed(100 * e.ponder_hit_rate, 0) + "% of " + e.pondered : ""];
    });
    fillRows("faults", (report && report.faults) || [], function (f) {
      return [f.engine, f.time_forfeits, f.crashes, f.stalls, f.illegal_moves, f.false_claims];
    });
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

    setStatus(status, reason) {
      const badge = $("t-status");
      badge.textContent = plain(status || "");
      badge.className = "status status-" + (status || "unknown");
      // why the last run failed: shown until the tournament runs again
      const why = $("t-reason");
      if (reason !== undefined) {
        why.replaceChildren.apply(why, reason ? ["Stopped because: ", bdi(reason)] : []);
        why.hidden = !reason;
      }
    }

    setProgress(done, total) {
      if (typeof total === "number") $("t-progress").max = total || 1;
      if (typeof done === "number") $("t-progress").value = done;
      $("t-games").textContent = (done || 0) + " of " + (total || 0) + " games";
    }

    boardFor(game) {
      let board = this.boards.get(game.index);
      if (!board) {
        board = new draw.BoardView(game);
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
      $("t-name").textContent = plain(detail.name);
      document.title = plain(detail.name) + " - cecp-runner";
      this.setStatus(detail.status, detail.reason || null);
      this.setProgress(detail.done_games, detail.total_games);
      drawStandings(detail.report);
      drawDiagnostics(detail.report);
      for (const index of Array.from(this.boards.keys())) this.removeBoard(index);
      for (const game of detail.games || []) this.boardFor(game);
      $("no-games").hidden = this.boards.size > 0;
      if (Array.isArray(detail.finished_games)) {
        // a snapshot that lists the finished games (oldest first) replaces the list as well
        $("finished").tBodies[0].replaceChildren();
        this.finishedSeen.clear();
        for (const game of detail.finished_games) this.gameFinished(game);
      }
      // A finished tournament's stream has nothing more to say: do not reconnect to it.
      if (detail.status === "finished") this.close();
    }

    status(status, reason) {
      this.setStatus(status, STILL_PLAYING.includes(status) ? null : reason);
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
      // the game's number opens its replay (the address is built from numbers only)
      const link = el("a", "", String(Number(result.index) + 1));
      link.href = "/tournaments/" + encodeURIComponent(this.id) + "/games/" + encodeURIComponent(Number(result.index));
      link.title = "replay this game";
      row.cells[0].replaceChildren(link);
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
        case "standings": drawStandings(data.report); drawDiagnostics(data.report); this.setProgress(data.done_games, data.total_games); break;
        case "notice": this.notice(data.text); break;
        case "status": this.status(data.status, data.reason); break;
        case "tournament_finished":
          this.status(data.status, data.reason);
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
      // Until the stream's snapshot arrives nothing is known about the games: say so, rather
      // than "no finished game" beside the finished games the server listed.
      draw.emptyPlot($("elo-plot"), "waiting for the event stream");
      draw.emptyPlot($("llr-plot"), "waiting for the event stream");
      if (protectedReads) this.openFetchStream(); else this.openEventSource();
    }
  }

  // -- one finished game, replayed ----------------------------------------------------------

  class GameReplay {
    constructor(tournament, index) {
      this.tournament = tournament;
      this.index = index;
      this.ply = 0;
      this.game = null;
      this.view = null;
    }

    async load() {
      const status = $("g-status");
      const response = await fetch("/api/tournaments/" + encodeURIComponent(this.tournament) + "/games/" +
        encodeURIComponent(this.index), { headers: authHeaders() });
      if (!response.ok) {
        const lines = await problemLines(response);
        showStatus(status, "The game cannot be read (" + response.status + "): " + lines.join("; "), true);
        return;
      }
      this.game = await response.json();
      const g = this.game;
      $("g-title").textContent = "Game " + (Number(g.index) + 1) + " \u00b7 round " + g.round + ": ";
      $("g-title").append(bdi(g.white), " \u2013 ", bdi(g.black));
      status.textContent = (g.result || "*") + (g.termination ? " (" + g.termination + (g.reason ? ": " + g.reason : "") + ")" : "") +
        (g.time_control ? " \u00b7 time control " + g.time_control : "");
      this.view = new draw.BoardView({ index: g.index, round: g.round, white: g.white, black: g.black, fen: g.start_fen, ply: 0,
        white_clock: g.white_clock, black_clock: g.black_clock });
      this.view.finished = true;  // a replay: no clock runs down
      // What a crashed, stalled or flagged engine wrote to stderr: text nodes only, never markup.
      const errs = [[g.white, g.white_stderr], [g.black, g.black_stderr]].filter(([, text]) => text);
      $("g-stderr-list").replaceChildren.apply($("g-stderr-list"), errs.flatMap(([name, text]) =>
        [el("h3", "", name), el("pre", "stderr", text)]));
      $("g-stderr").hidden = errs.length === 0;
      $("g-board").replaceChildren(this.view.card);
      const tbody = $("g-moves").tBodies[0];
      tbody.replaceChildren.apply(tbody, g.moves.map((m, k) => {
        const row = el("tr");
        row.dataset.ply = String(k + 1);
        const number = Math.ceil(m.ply / 2) + (m.ply % 2 === 1 ? "." : "...");
        for (const [value, cls] of [[number, "num"], [m.san, ""], [typeof m.time_ms === "number" ? fixed(m.time_ms / 1000, 2) + " s" : "book", "num"],
          [clock(m.white_clock), "num"], [clock(m.black_clock), "num"], [evalOf(m), "num"]]) {
          row.append(el("td", cls, value));
        }
        row.addEventListener("click", () => this.show(k + 1));
        return row;
      }));
      this.show(g.moves.length);
    }

    // Show the position after `ply` plies (0: the start position).
    show(ply) {
      const g = this.game;
      if (!g) return;
      this.ply = Math.max(0, Math.min(ply, g.moves.length));
      const m = this.ply ? g.moves[this.ply - 1] : null;
      this.view.game = {};
      this.view.update({ index: g.index, round: g.round, white: g.white, black: g.black,
        fen: m ? m.fen || "" : g.start_fen, ply: this.ply, san: m ? m.san : "", uci: m ? m.uci : "",
        white_clock: m ? m.white_clock : g.white_clock, black_clock: m ? m.black_clock : g.black_clock,
        score_cp: m ? m.score_cp : null, mate: m ? m.mate : null, depth: m ? m.depth : null });
      $("g-ply").textContent = "ply " + this.ply + " of " + g.moves.length;
      for (const row of $("g-moves").tBodies[0].rows) row.classList.toggle("current", Number(row.dataset.ply) === this.ply);
    }

    start() {
      wireToken(() => this.load().catch(function () {}));
      $("g-first").addEventListener("click", () => this.show(0));
      $("g-prev").addEventListener("click", () => this.show(this.ply - 1));
      $("g-next").addEventListener("click", () => this.show(this.ply + 1));
      $("g-last").addEventListener("click", () => this.show(Infinity));
      document.addEventListener("keydown", (event) => {
        if (event.target && event.target.tagName === "INPUT") return;
        const to = { ArrowLeft: this.ply - 1, ArrowRight: this.ply + 1, Home: 0, End: Infinity }[event.key];
        if (to !== undefined) { event.preventDefault(); this.show(to); }
      });
      this.load().catch((error) => showStatus($("g-status"), "The game cannot be read: " + error, true));
    }
  }

  function clock(seconds) {
    if (typeof seconds !== "number" || !isFinite(seconds)) return "";
    const s = Math.max(0, seconds), minutes = Math.floor(s / 60), rest = s - 60 * minutes;
    return minutes + ":" + (rest < 10 ? "0" : "") + rest.toFixed(1);
  }

  // The mover's own score as stored, from White's point of view (the mover is the side not
  // to move in the position after the move).
  function evalOf(m) {
    const whiteMoved = m.fen ? String(m.fen).split(" ")[1] === "b" : m.ply % 2 === 1;
    const sign = whiteMoved ? 1 : -1;
    if (typeof m.mate === "number" && m.mate !== 0) return "#" + sign * m.mate;
    if (typeof m.score_cp === "number") return signed(sign * m.score_cp / 100, 2) + (typeof m.depth === "number" ? " d" + m.depth : "");
    return "";
  }

  // A branch test's page: each started stage's Elo and LLR over games, drawn from its
  // tournament's report as the tournament's own page draws them.
  async function startTest() {
    for (const stage of document.querySelectorAll("[data-stage-tournament]")) {
      const elo = stage.querySelector(".elo-plot"), llr = stage.querySelector(".llr-plot");
      try {
        const response = await fetch("/api/tournaments/" + encodeURIComponent(stage.dataset.stageTournament),
                                     { headers: authHeaders() });
        if (!response.ok) throw new Error("status " + response.status);
        const report = (await response.json()).report;
        draw.drawElo(elo, report && report.series);
        draw.drawLlr(llr, report && report.series, report && report.sprt);
      } catch (error) {
        draw.emptyPlot(elo, "the stage's report cannot be read: " + error.message);
        draw.emptyPlot(llr, "");
      }
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    const page = document.body.dataset.page;
    if (page === "index") startIndex();
    else if (page === "test") startTest();
    else if (page === "tournament") new TournamentView(document.body.dataset.tournament).start();
    else if (page === "game") new GameReplay(document.body.dataset.tournament, document.body.dataset.game).start();
  });
})();
