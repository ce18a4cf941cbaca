-- The tables of the application loop (bench/baseline.py) that
-- bench/baseline.sh and bench/enqueue.sh measure against: the same shape
-- as matchmaker.tickets and matchmaker.matches (columns, defaults,
-- constraints and indexes).
CREATE TABLE bl_tickets (LIKE matchmaker.tickets INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE bl_tickets ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX ON bl_tickets (queue, player) WHERE state = 'waiting';
CREATE INDEX ON bl_tickets (match_id) WHERE match_id IS NOT NULL;
CREATE TABLE bl_matches (LIKE matchmaker.matches INCLUDING CONSTRAINTS);
CREATE SEQUENCE bl_matches_id_seq OWNED BY bl_matches.id;
ALTER TABLE bl_matches ALTER id SET DEFAULT nextval('bl_matches_id_seq'), ALTER bots SET DEFAULT 0;
ALTER TABLE bl_matches ADD PRIMARY KEY (id);
CREATE INDEX ON bl_matches (queue, created_at);
