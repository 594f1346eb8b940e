-- revision: e5b7c3d9a184
-- table alembic_version
CREATE TABLE alembic_version (
	version_num VARCHAR(32) NOT NULL, 
	CONSTRAINT alembic_version_pkc PRIMARY KEY (version_num)
);
-- table tournaments
CREATE TABLE tournaments (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	config JSON NOT NULL, 
	fingerprint VARCHAR(64) NOT NULL, 
	total_games INTEGER NOT NULL, 
	status VARCHAR(16) NOT NULL, 
	created_at DATETIME NOT NULL, 
	finished_at DATETIME, 
	sprt_decision VARCHAR(16), 
	book_state JSON, origin VARCHAR(16), reason TEXT, 
	CONSTRAINT pk_tournaments PRIMARY KEY (id)
);
-- index ix_tournaments_fingerprint
CREATE INDEX ix_tournaments_fingerprint ON tournaments (fingerprint);
-- table engines
CREATE TABLE engines (
	id INTEGER NOT NULL, 
	tournament_id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	command JSON NOT NULL, 
	protocol VARCHAR(16) NOT NULL, 
	options JSON, 
	CONSTRAINT pk_engines PRIMARY KEY (id), 
	CONSTRAINT fk_engines_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE, 
	CONSTRAINT uq_engines_tournament_id_name UNIQUE (tournament_id, name)
);
-- index ix_engines_tournament_id
CREATE INDEX ix_engines_tournament_id ON engines (tournament_id);
-- table games
CREATE TABLE games (
	id INTEGER NOT NULL, 
	tournament_id INTEGER NOT NULL, 
	job_index INTEGER NOT NULL, 
	round INTEGER NOT NULL, 
	pair_index INTEGER NOT NULL, 
	game_in_pair INTEGER NOT NULL, 
	white_id INTEGER NOT NULL, 
	black_id INTEGER NOT NULL, 
	opening_index INTEGER NOT NULL, 
	opening_fen TEXT, 
	opening_moves TEXT, 
	status VARCHAR(16) NOT NULL, 
	result VARCHAR(8), 
	termination VARCHAR(32), 
	reason TEXT, 
	plies INTEGER, 
	started_at DATETIME, 
	ended_at DATETIME, 
	pgn TEXT, pgn_offset BIGINT, worker VARCHAR(200), white_stderr TEXT, black_stderr TEXT, 
	CONSTRAINT pk_games PRIMARY KEY (id), 
	CONSTRAINT fk_games_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE, 
	CONSTRAINT fk_games_white_id_engines FOREIGN KEY(white_id) REFERENCES engines (id), 
	CONSTRAINT fk_games_black_id_engines FOREIGN KEY(black_id) REFERENCES engines (id), 
	CONSTRAINT uq_games_tournament_id_job_index UNIQUE (tournament_id, job_index)
);
-- index ix_games_tournament_id_status
CREATE INDEX ix_games_tournament_id_status ON games (tournament_id, status);
-- index ix_games_white_id
CREATE INDEX ix_games_white_id ON games (white_id);
-- index ix_games_black_id
CREATE INDEX ix_games_black_id ON games (black_id);
-- table moves
CREATE TABLE moves (
	game_id INTEGER NOT NULL, 
	ply INTEGER NOT NULL, 
	san VARCHAR(16) NOT NULL, 
	uci VARCHAR(8) NOT NULL, 
	time_ms INTEGER, 
	depth INTEGER, 
	score_cp INTEGER, 
	mate INTEGER, 
	nodes BIGINT, seldepth INTEGER, clock_ms INTEGER, time_left_ms INTEGER, ponder_hit BOOLEAN, 
	CONSTRAINT pk_moves PRIMARY KEY (game_id, ply), 
	CONSTRAINT fk_moves_game_id_games FOREIGN KEY(game_id) REFERENCES games (id) ON DELETE CASCADE
);
-- table leases
CREATE TABLE leases (
	tournament_id INTEGER NOT NULL, 
	owner VARCHAR(64) NOT NULL, 
	pid INTEGER NOT NULL, 
	host VARCHAR(255) NOT NULL, 
	acquired_at DATETIME NOT NULL, 
	heartbeat_at DATETIME NOT NULL, timeout_seconds FLOAT, 
	CONSTRAINT pk_leases PRIMARY KEY (tournament_id), 
	CONSTRAINT fk_leases_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE
);
-- table branch_tests
CREATE TABLE branch_tests (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	recipe VARCHAR(200) NOT NULL, 
	base_ref VARCHAR(200) NOT NULL, 
	base_sha VARCHAR(64) NOT NULL, 
	dev_ref VARCHAR(200) NOT NULL, 
	dev_sha VARCHAR(64) NOT NULL, 
	spec JSON NOT NULL, 
	priority INTEGER NOT NULL, 
	share FLOAT NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	stage INTEGER NOT NULL, 
	tournaments JSON NOT NULL, 
	message TEXT, 
	created_at DATETIME NOT NULL, 
	updated_at DATETIME NOT NULL, author VARCHAR(200), results JSON, builds JSON, 
	CONSTRAINT pk_branch_tests PRIMARY KEY (id)
);
-- table tokens
CREATE TABLE tokens (
	id INTEGER NOT NULL, 
	name VARCHAR(100) NOT NULL, 
	role VARCHAR(16) NOT NULL, 
	digest VARCHAR(64) NOT NULL, 
	created_at DATETIME NOT NULL, 
	last_used_at DATETIME, 
	revoked_at DATETIME, 
	CONSTRAINT pk_tokens PRIMARY KEY (id), 
	CONSTRAINT uq_tokens_name UNIQUE (name), 
	CONSTRAINT uq_tokens_digest UNIQUE (digest)
);
-- table tunes
CREATE TABLE tunes (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	"plan" JSON NOT NULL, 
	created_at DATETIME NOT NULL, submitted JSON, placement VARCHAR(20), stopped BOOLEAN DEFAULT 0 NOT NULL, 
	CONSTRAINT pk_tunes PRIMARY KEY (id), 
	CONSTRAINT uq_tunes_name UNIQUE (name)
);
-- table tune_iterations
CREATE TABLE tune_iterations (
	id INTEGER NOT NULL, 
	tune_id INTEGER NOT NULL, 
	k INTEGER NOT NULL, 
	flips JSON NOT NULL, 
	plus JSON NOT NULL, 
	minus JSON NOT NULL, 
	result INTEGER NOT NULL, 
	theta JSON NOT NULL, 
	tournament_id INTEGER, 
	created_at DATETIME NOT NULL, 
	CONSTRAINT pk_tune_iterations PRIMARY KEY (id), 
	CONSTRAINT fk_tune_iterations_tune_id_tunes FOREIGN KEY(tune_id) REFERENCES tunes (id) ON DELETE CASCADE, 
	CONSTRAINT uq_tune_iterations_tune_id_k UNIQUE (tune_id, k)
);
-- table fleet_workers
CREATE TABLE fleet_workers (
	id INTEGER NOT NULL, 
	name VARCHAR(200) NOT NULL, 
	principal VARCHAR(200), 
	info JSON NOT NULL, 
	registered_at DATETIME NOT NULL, 
	last_seen DATETIME NOT NULL, 
	games INTEGER NOT NULL, 
	flag TEXT, 
	blocked BOOLEAN NOT NULL, 
	CONSTRAINT pk_fleet_workers PRIMARY KEY (id)
);
-- table fleet_batches
CREATE TABLE fleet_batches (
	id INTEGER NOT NULL, 
	tournament_id INTEGER NOT NULL, 
	worker_id INTEGER NOT NULL, 
	games JSON NOT NULL, 
	state VARCHAR(16) NOT NULL, 
	leased_at DATETIME NOT NULL, 
	deadline DATETIME NOT NULL, 
	CONSTRAINT pk_fleet_batches PRIMARY KEY (id), 
	CONSTRAINT fk_fleet_batches_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE, 
	CONSTRAINT fk_fleet_batches_worker_id_fleet_workers FOREIGN KEY(worker_id) REFERENCES fleet_workers (id) ON DELETE CASCADE
);
-- index ix_fleet_batches_tournament_id
CREATE INDEX ix_fleet_batches_tournament_id ON fleet_batches (tournament_id);
-- index ix_fleet_batches_worker_id
CREATE INDEX ix_fleet_batches_worker_id ON fleet_batches (worker_id);
-- table tournament_placements
CREATE TABLE tournament_placements (
	tournament_id INTEGER NOT NULL, 
	placement VARCHAR(16) NOT NULL, 
	CONSTRAINT pk_tournament_placements PRIMARY KEY (tournament_id), 
	CONSTRAINT fk_tournament_placements_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE
);
-- table fleet_games
CREATE TABLE fleet_games (
	tournament_id INTEGER NOT NULL, 
	job_index INTEGER NOT NULL, 
	worker_id INTEGER NOT NULL, 
	batch_id INTEGER NOT NULL, 
	factor FLOAT NOT NULL, factor_source VARCHAR(200), 
	CONSTRAINT pk_fleet_games PRIMARY KEY (tournament_id, job_index), 
	CONSTRAINT fk_fleet_games_tournament_id_tournaments FOREIGN KEY(tournament_id) REFERENCES tournaments (id) ON DELETE CASCADE, 
	CONSTRAINT fk_fleet_games_worker_id_fleet_workers FOREIGN KEY(worker_id) REFERENCES fleet_workers (id) ON DELETE CASCADE
);
-- index ix_fleet_games_worker_id
CREATE INDEX ix_fleet_games_worker_id ON fleet_games (worker_id);
