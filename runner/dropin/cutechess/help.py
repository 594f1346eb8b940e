"""``runner-cutechess -help``: cutechess-cli's options in the runner's words, and what differs."""

from __future__ import annotations

__all__ = ["HELP"]

HELP = """\
Usage:

  runner-cutechess -engine [engine keys] -engine [engine keys]... [options]

runner-cutechess takes cutechess-cli 1.5.1's command line and plays it with cecp-runner:
the same games in the same order (openings, colours, game numbers), the same lines on the
screen and the same PGN. What it adds:

  - every game is also stored in the runner's database (./runner.db, or the one RUNNER_DB
    names), so 'runner report', 'runner export' and 'runner serve' work on the run;
  - running the same command line again continues an interrupted run: only the games that
    are missing are played (cutechess-cli starts over);
  - without -srand, a random opening order is drawn from the command line itself (the same
    words, the same order), not from the time of day.

Options:

  -help                 Print this text.
  -version              Print the version: the cutechess-cli release first.
  -engines              List the engines of cutechess's engines.json (./engines.json, else
                        ~/.config/cutechess/engines.json).
  -engine KEYS          One engine of the tournament (give one per engine, two at least).
  -each KEYS            Keys applied to every engine, after each engine's own.
  -variant VARIANT      standard (default) or fischerandom. cutechess-cli's other variants
                        are refused here.
  -concurrency N        Play N games at once.
  -draw movenumber=N movecount=C score=S
                        Draw when, from full move N on, both engines' scores stay within S
                        centipawns of zero for C moves in a row (captures and pawn moves
                        start the count again).
  -resign movecount=C score=S [twosided=true]
                        A loss when an engine's score stays S centipawns below zero for C
                        moves in a row (twosided: the winner must agree as well).
  -maxmoves N           A draw after N full moves (0: no limit).
  -tb PATHS             Adjudicate with the Syzygy tables in these ':'-separated directories.
  -tbpieces N           Only positions of at most N pieces (3 or more).
  -tbignore50           The tables' verdicts ignore the fifty-move rule.
  -tournament TYPE      round-robin (default), gauntlet (the first engine, or the -seeds
                        first, against the rest) or pyramid (each engine against those before
                        it). knockout is refused here: its pairings depend on the results.
  -event EVENT          The PGN Event tag.
  -site SITE            The PGN Site tag.
  -games N              Games per encounter (default 1).
  -rounds N             Play the tournament's rounds N times.
  -repeat [N]           Play each opening twice (or N times) before the next one; the
                        engines change colours between games unless -noswap is given.
  -noswap               Keep the colours of a pair of engines from game to game.
  -reverse              Start every pair with the colours reversed.
  -seeds N              The first N engines are seeded.
  -srand N              The seed of the random opening order.
  -wait N               Wait N milliseconds before each game (after the first finished).
  -sprt elo0=E0 elo1=E1 alpha=A beta=B
                        Stop a two-engine match once the test decides (BayesElo bounds).
  -ratinginterval N     Print the ratings every N games (0: at the end).
  -outcomeinterval N    Print each engine's outcomes every N games (0: at the end).
  -resultformat FORMAT  The columns of the ratings table: a named format or fields separated
                        by commas; 'help' lists them.
  -debug all            Print every line sent to and read from each engine on stdout, as
                        'MS >NAME(N): LINE'; a bare -debug is refused as by cutechess-cli 1.5.1.
  -openings file=FILE format=epd|pgn order=sequential|random plies=N start=N
            policy=default|encounter|round
                        Openings from FILE (format pgn unless told). plies: at most N plies of
                        each PGN game (default 1024); start: the first opening (from 1);
                        policy: a new opening for each new pair of engines and after the
                        repetitions (default), only for a new pair (encounter), or only for a
                        new round (round). EPD positions start at move 1 with a zero halfmove
                        clock unless their hmvc and fmvn operations say otherwise.
  -bookmode ram|disk    Accepted (the runner reads books from disk as it needs them).
  -pgnout FILE [min] [fi]
                        Append every game to FILE as it ends; min: tags and moves only; fi:
                        finished games only.
  -epdout FILE          Append every game's final position to FILE.
  -recover              Restart an engine that crashed or stalled and go on.

Engine keys:

  conf=NAME             The engine NAME of engines.json.
  name=NAME             Its name (default: the name the engine reports, numbered when two
                        report the same; else the program's name).
  cmd=COMMAND           The program (arguments go in arg=).
  dir=DIR               Its working directory (default: the temporary directory).
  arg=ARG               One argument for the program (repeatable).
  proto=xboard|uci      Its protocol (required).
  initstr=TEXT          Text sent to the engine at the start of each game ('\\n' separates
                        lines).
  stderr=FILE           Append the engine's standard error to FILE.
  restart=auto|on|off   Start the engine afresh for every game (on), never (off), or as the
                        runner decides (auto).
  tc=TC                 moves/time+increment, time in seconds or minutes:seconds; tc=inf with
                        depth= or nodes=. Hourglass controls are refused here.
  st=N                  N seconds per move.
  timemargin=N          N milliseconds over the clock before a time loss.
  depth=N               Search N plies.
  nodes=N               Search N nodes.
  ponder                Think on the opponent's time (CECP hard; UCI go ponder/ponderhit).
  tscale=FACTOR         Scale the waits for the engine to start, answer and quit.
  bookdepth=N           Accepted; it only matters with book=, which is refused here.
  whitepov              The engine reports scores from White's side: they are negated
                        when it plays Black.
  debug                 Send 'debug on' to a UCI engine.
  option.NAME=VALUE     Set the engine's option NAME.

Refused here, with a line saying so: book= (a per-engine Polyglot book), trust (the runner
always checks result claims), hourglass time controls, -tournament knockout and variants
other than standard and fischerandom.
"""
