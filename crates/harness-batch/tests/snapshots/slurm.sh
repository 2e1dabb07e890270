#!/bin/sh
# Written by `harness batch --emit slurm`: the 3 task lines of /srv/evals/tasks.jsonl
# as a Slurm job array, one task line per index. Submit it with `sbatch FILE`
# (`sbatch --wait FILE` returns when every index has ended); then gather the
# results into results.jsonl and the summary with
#   /opt/harness/bin/harness batch collect /srv/evals/out
# An index with a result keeps it when run again (--resume): resubmit to run the
# rest. A line that is not a task exits 2 with its error in its output file.
#
# index  task
#     0  fix-add
#     1  port-parser
#     2  (not a task: tasks.jsonl:4: "max_steps": invalid type: string "ten", expected u32)
#SBATCH --job-name=harness-tasks
#SBATCH --array=0-2%2
#SBATCH --time=01:12:00
#SBATCH --output=/srv/evals/out/slurm-%A_%a.out

exec /opt/harness/bin/harness batch /srv/evals/tasks.jsonl --out /srv/evals/out --resume
