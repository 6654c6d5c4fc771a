-- Table of pccload's partition-mix workload: one row per pgbench account
-- (scale x 100000), hash-partitioned into 16.  psql -v scale=N -f this.
DROP TABLE IF EXISTS pcc_part;
CREATE TABLE pcc_part (id bigint PRIMARY KEY, v integer NOT NULL DEFAULT 0,
                       created timestamptz NOT NULL DEFAULT now())
    PARTITION BY HASH (id);
SELECT format('CREATE TABLE pcc_part_%s PARTITION OF pcc_part FOR VALUES WITH (MODULUS 16, REMAINDER %s)', r, r)
  FROM generate_series(0, 15) r \gexec
INSERT INTO pcc_part (id) SELECT generate_series(1, :scale * 100000);
VACUUM ANALYZE pcc_part;
