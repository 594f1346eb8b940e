"""The text of ``runner-fastchess -help``: fastchess's options in short, and what differs."""

from __future__ import annotations

__all__ = ["MANUAL"]

MANUAL = """\
runner-fastchess {version} (cecp-runner {runner}): fastchess's command line, played by cecp-runner

Usage: runner-fastchess [OPTIONS]        (the same options as fastchess {version})

What is not as in fastchess:
  - Every game is also stored in the runner's database (./runner.db, or the URL in RUNNER_DB),
    so `runner report`, `runner export` and `runner serve` work on the run.
  - Running the same command line again continues an interrupted run: only the games still
    missing are played (fastchess resumes only with -config file=, which works here too).
    After a run that finished, the same command line starts a new run.
  - Without -srand, the random opening order comes from the command line itself rather than
    from the clock, so that a rerun continues with the same openings.
  - Refused with a line saying so (the runner cannot honour them): -use-affinity with a CPU
    list, -startup-ms/-ucinewgame-ms/-ping-ms other than their defaults, compressed (.gz)
    books, --compliance, and a -config file= holding games fastchess itself played.

Tournament
  -tournament (roundrobin|gauntlet)   every engine against every other / the first -seeds
                                      engines against all the others
  -seeds N (1)                        gauntlet seeds
  -rounds N (2)                       rounds; each encounter of a round shares one opening
  -games N (2)                        games per encounter and round (1 or 2; above 2, games
                                      and rounds are swapped)
  -repeat [N]                         games per encounter (2 without N)
  -noswap                             the encounter's first engine always has White
  -reverse                            colours the other way round
  -concurrency N (1)                  games at once (at most the CPU count, unless
  -force-concurrency                  is given; 0 or less: that many below the CPU count)
  -wait N (0)                         milliseconds between the games of a slot
  -variant (standard|fischerandom)    Chess960 needs an opening book
  -recover                            restart a crashed or stalled engine and go on
  -sprt elo0= elo1= alpha= beta= [model=(normalized|logistic|bayesian)]
  -quick cmd=ENGINE cmd=ENGINE book=FILE
                                      10+0.1, 25000 rounds, concurrency = CPUs - 2, recover,
                                      draw adjudication 30/8/8, cutechess-style output
Engines
  -engine KEY=VALUE...                one engine; -each KEY=VALUE... applies to all of them
      cmd= name= dir= args="..." proto=uci restart=(off|on) option.NAME=VALUE
      tc=[MOVES/]MINUTES:SECONDS|SECONDS[+INC] | tc=inf   st=SECONDS   timemargin=MS
      nodes=N   plies=N (or depth=N)
Openings
  -openings file=F [format=(epd|pgn)] [order=(sequential|random)] [plies=N] [start=N]
            [policy=round]            random order: fastchess's shuffle, seeded by -srand
  -srand SEED
Adjudication
  -draw movenumber=N movecount=N score=CP
  -resign movecount=N score=CP [twosided=(false|true)]
  -maxmoves N
  -tb DIR[:DIR...]   -tbpieces N   -tbignore50   -tbadjudicate (BOTH|WIN_LOSS|DRAW)
Output
  -output format=(fastchess|cutechess)
  -pgnout [file=F] [notation=(san|lan|uci)] [append=] [nodes=] [seldepth=] [nps=]
          [hashfull=] [tbhits=] [pv=] [timeleft=] [latency=] [min=] [match_line=REGEX]
  -epdout [file=F] [append=]          -event NAME   -site NAME   -crc32 pgn=true
  -ratinginterval N (10)   -scoreinterval N (1)   -report penta=(true|false)
  -config [file=F] [discard=] [outname=F] [stats=]   -autosaveinterval N (20)
  -log file=F [level=] [append=] [compress=] [realtime=] [engine=]
  -show-latency   -check-mate-pvs   -testEnv   -strict
  -use-affinity   -startup-ms N   -ucinewgame-ms N   -ping-ms N
  -version   -help
"""
