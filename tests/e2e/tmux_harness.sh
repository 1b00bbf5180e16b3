# The console driven in tmux, for the e2e scripts that source it (not a test itself: it has
# no #! line, so tests/run.sh passes it over):
#     . "$(dirname "$0")/tmux_harness.sh" CLIENT...
# checks that the fake driver's CLIENTs are built and tmux is there, gives the script a
# private tmux server and temporary directory $T (both gone at exit), and defines
#     start ARGS...             culeak ARGS in a fresh 120x40 session (start_sized COLS ROWS ARGS...)
#     screen                    what the session shows
#     wait_for TEXT             polls the screen until TEXT is on it, else fails (with
#                               UNLESS=ERE set, at once on a screen that matches ERE and
#                               lacks TEXT: what shows instead, such as the job's end where
#                               it should pause, fails without waiting out the deadline)
#     wait_gone TEXT            polls the screen until TEXT is no longer on it, else fails
#     wait_file FILE TEXT       polls FILE until a line of it holds TEXT, else fails
#                               (each wait fails after $WAIT_S seconds, 60 unless set: a
#                               deadline of the clock, which a loaded machine does not stretch)
#     type_line TEXT            types TEXT and Enter
#     type_expect LINE TEXT     types LINE and waits for TEXT, which must not be on the screen
#                               before (so the wait cannot match a stale screen)
#     fail MESSAGE              prints MESSAGE and the screen, exits 1
# A line CONSOLE-DONE rc=N follows culeak's exit in the session (at the start of a line of
# its own, \r too: a killed console leaves the terminal raw; so a shell's long "Killed ..."
# message before it cannot wrap it). Killed (tests/run.sh's timeout), the script says what
# it was waiting for and shows the screen.
BUILD=${BUILD:-build}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=$ROOT/$BUILD
# the job side (fake driver, clients) may come from another build: CULEAK_E2E_FAKE=DIR
FAKE=${CULEAK_E2E_FAKE:-$B/fakecuda}
for client in "$@"; do
    [ -x "$FAKE/$client" ] || { echo "fake driver not built"; exit 1; }
done
command -v tmux >/dev/null || { echo "tmux missing"; exit 1; }
T=$(mktemp -d)
S=culeak-$(basename "$0" .sh)-$$
export TMUX_TMPDIR=$T
cleanup() { tmux kill-server 2>/dev/null; rm -rf "$T" 2>/dev/null || rm -rf "$T"; }
trap cleanup EXIT
# an ASan-built shim is preloaded into programs built without it (SAN=1 builds)
ENVS="ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state XDG_CONFIG_HOME=$T/config LD_LIBRARY_PATH=$FAKE TERM=xterm-256color"
# CULEAK_E2E_SHIM / CULEAK_E2E_FAKE: the job side from a plain build, so a SAN build
# tests its console without preloading sanitized code into unsanitized programs
[ -n "${CULEAK_E2E_SHIM:-}" ] && ENVS="$ENVS CULEAK_LIB=$CULEAK_E2E_SHIM"
mkdir -m 700 "$T/run"
# a session of its own keeps the server up: killing the only session ends the server, and
# a start racing with that exit would find no server
tmux new-session -d -s keepalive -x 20 -y 5 "sleep 3600"

screen() { tmux capture-pane -p -t "$S"; }
fail() { echo "FAIL: $*"; echo "---- screen ----"; screen; exit 1; }
WAIT_S=${WAIT_S:-60}
waiting=""
trap 'fail "killed while ${waiting:-not waiting}"' TERM INT
# until_deadline CMD...: runs CMD every 0.1 s until it succeeds (0), or WAIT_S s pass (1)
until_deadline() {
    local end=$((SECONDS + WAIT_S))
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.1
    done
}
on_screen() { screen | grep -qF -- "$1"; }
# on_screen_unless TEXT ERE: TEXT is on the screen (0), or not yet (1); fails when the
# screen matches ERE without TEXT
on_screen_unless() {
    local now
    now=$(screen)
    grep -qF -- "$1" <<<"$now" && return 0
    grep -qE -- "$2" <<<"$now" && fail "saw /$2/ on the screen while waiting for: $1"
    return 1
}
off_screen() { ! on_screen "$1"; }
in_file() { grep -qF -- "$2" "$1" 2>/dev/null; }
# wait_for TEXT: polls the screen until a generous deadline (never a fixed sleep)
wait_for() {
    waiting="waiting for: $1"
    if [ -n "${UNLESS:-}" ]; then
        until_deadline on_screen_unless "$1" "$UNLESS" || fail "never saw in $WAIT_S s: $1"
    else
        until_deadline on_screen "$1" || fail "never saw in $WAIT_S s: $1"
    fi
    waiting=""
}
wait_gone() {
    waiting="waiting for this to go: $1"
    until_deadline off_screen "$1" || fail "still on the screen after $WAIT_S s: $1"
    waiting=""
}
wait_file() {
    waiting="waiting for '$2' in $1"
    if ! until_deadline in_file "$1" "$2"; then
        echo "---- $1 ----"
        cat "$1"
        fail "'$2' not in $1 after $WAIT_S s"
    fi
    waiting=""
}
type_line() { tmux send-keys -t "$S" -l -- "$1"; tmux send-keys -t "$S" Enter; }
type_expect() {
    ! screen | grep -qF -- "$2" || fail "'$2' is on the screen before '$1' (a stale match): wait for something new"
    type_line "$1"
    wait_for "$2"
}
start_sized() {
    local cols=$1 rows=$2
    shift 2
    tmux kill-session -t "$S" 2>/dev/null
    tmux new-session -d -s "$S" -x "$cols" -y "$rows" \
        "env $ENVS $B/culeak $* ; rc=\$?; printf '\\r\\nCONSOLE-DONE rc=%s\\r\\n' \$rc; sleep 600"
}
start() { start_sized 120 40 "$@"; }
