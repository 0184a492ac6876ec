# Starts a private PostgreSQL cluster on a loopback port for tests; exports PG_TEST_URL.
PG_BIN=/usr/lib/postgresql/15/bin
PG_PORT=${PG_PORT:-55432}
PG_DIR=${PG_DIR:-/tmp/portcullis-pg}
start_test_postgres() {
  [ -x "$PG_BIN/postgres" ] || return 1
  rm -rf "$PG_DIR"; mkdir -p "$PG_DIR"; chown postgres:postgres "$PG_DIR" 2>/dev/null || true
  local as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  "${as[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --auth=trust >/dev/null || return 1
  "${as[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off" -l "$PG_DIR/log" -w start >/dev/null || return 1
  export PG_TEST_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
}
stop_test_postgres() {
  local as=(); [ "$(id -u)" = 0 ] && as=(runuser -u postgres --)
  [ -d "$PG_DIR/data" ] && "${as[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast stop >/dev/null 2>&1 || true
}
