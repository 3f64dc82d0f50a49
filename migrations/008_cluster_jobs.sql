-- Scheduled jobs that every API process could run but that must run once per cluster, whatever
-- the number of processes: a process claims the job's next run by moving started_at forward, in
-- one statement that only one process can win per interval. runs counts the runs ever claimed.
CREATE TABLE auth.scheduled_runs (
  job         text PRIMARY KEY,
  started_at  timestamptz NOT NULL,
  -- who claimed the latest run: application name and process id, for operators
  started_by  text NOT NULL,
  runs        bigint NOT NULL DEFAULT 0
);
