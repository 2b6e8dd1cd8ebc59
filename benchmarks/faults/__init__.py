"""Fault-injection campaign: every fault class against every command a user runs.

    python -m benchmarks.faults [--only PATTERN] [--json PATH] [--work DIR] [--keep] [--list]

Each case runs the real command (``python -m selene.cli ...`` in a subprocess, SELENE_PREFECT=off)
on tiny inputs built once per campaign (the corpus of tests/ingest/test_ingest.py, a 4-layer ``debug``
model trained for 2 steps, a 2-layer one, a second tokenizer), and its outcome is decided
mechanically:

held:
  clear error      nonzero exit, no traceback, the message names the offending path (or config
                   field), every input unchanged
  quarantine       exit 0 and the bad record is in removed.parquet with a reason
  identical rerun  after a kill or a full disk, a rerun succeeds with output byte-identical to an
                   uninterrupted run of the same command
  refused          exit 2 naming the paths in conflict, every input unchanged
  ran clean        exit 0 with output identical to an unfaulted run: held for damaged files (the
                   damage missed every byte the command uses: nothing lost) and for an empty
                   stage config (= the defaults); a failure where the command was asked to do
                   something wrong (a list as config, another model's shapes)
failed:
  traceback        a Python traceback in stdout/stderr
  unclear error    nonzero exit, but the message names no offending path
  silent loss/corruption  exit 0 on bad input (output differs, or the corruption went unnoticed),
                   or an input modified, or a rerun whose output differs
  not refused      two commands wrote the same output at once and both exited 0
  orphans          processes of a killed command still alive a second later
  hang             no exit within the timeout

The package, bottom to top: `context` (the work directory, the environment, running one command),
`injectors` (damage to a file), `judges` (the outcome of a run), `fixtures` (the inputs built once,
each stage's command line), `cases` (the catalogue), `render` (the table) and `runner` (the campaign,
`main`).

Each case has the outcomes that count as held for it (``expect``); any other outcome is a failure,
printed with the first line of the command's message so a reader can judge. Full disk is a small
tmpfs (``mount -t tmpfs``, root only) remounted larger for the rerun; without one, and for the
``fsize`` cases, ``RLIMIT_FSIZE`` in the child (writes fail with EFBIG past N bytes; SIGXFSZ
ignored so it is an error, not a kill).
"""
