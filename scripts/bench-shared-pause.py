#!/usr/bin/env python3
"""The pause part of scripts/bench-shared-store: two gateways on one PostgreSQL server,
all on loopback (run inside a network namespace of its own). 50 times: a pause is sent to
the first gateway's API, and the second is asked for a name every millisecond until it
answers blocked (NXDOMAIN); the time from sending the pause to that answer is recorded;
then a resume, and the second is asked until it answers again. Prints the median, the
90th percentile and the maximum, in milliseconds. With LOAD=1, dnsperf keeps both
gateways' DNS busy (4 clients each, 100 queries in flight) for the whole measurement."""
import http.client, json, os, shutil, socket, ssl, statistics, struct, subprocess, sys, tempfile, time

BIN = os.environ.get("PHOSRA_GATE", "phosra-gate")
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PG_BIN = sorted(d for d in os.listdir("/usr/lib/postgresql"))[-1]
PG_BIN = "/usr/lib/postgresql/%s/bin" % PG_BIN
PASSWORD = "bench-parent-password"
ROUNDS = int(os.environ.get("PAUSES", "50"))
work = tempfile.mkdtemp(prefix="pg-bench-pause.")
os.chmod(work, 0o755)
procs = []


def as_postgres(args, **kw):
    return ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] + args


def start(args, log):
    p = subprocess.Popen(args, stdout=open(log, "w"), stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def wait_for(check, seconds, what):
    end = time.time() + seconds
    while time.time() < end:
        if check():
            return
        time.sleep(0.05)
    raise SystemExit("bench-shared-pause: %s did not happen within %d s" % (what, seconds))


def query(sock, port, qid):
    packet = struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + b"\x07example\x03com\x00" + struct.pack(">HH", 1, 1)
    sock.sendto(packet, ("127.0.0.1", port))
    while True:
        data, _ = sock.recvfrom(4096)
        if struct.unpack(">H", data[:2])[0] == qid:
            return data[3] & 0x0F


def api(port, path, body, cookie=None, csrf=None):
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ssl._create_unverified_context(), timeout=10)
    headers = {"Content-Type": "application/json"}
    if cookie:
        headers["Cookie"] = cookie
    if csrf:
        headers["X-CSRF-Token"] = csrf
    conn.request("POST", path, json.dumps(body), headers)
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise SystemExit("bench-shared-pause: %s answered %d %s" % (path, response.status, data[:200]))
    return response, data


try:
    data = os.path.join(work, "pg")
    os.mkdir(data, 0o700)
    shutil.chown(data, "postgres")
    pgpass = os.path.join(work, "pgpass")
    open(pgpass, "w").write("bench-secret\n")
    shutil.chown(pgpass, "postgres")
    subprocess.run(
        as_postgres([PG_BIN + "/initdb", "-D", data, "-U", "phosra", "--pwfile", pgpass,
                     "--auth=scram-sha-256", "--no-sync"]), check=True, stdout=subprocess.DEVNULL)
    start(as_postgres([PG_BIN + "/postgres", "-D", data, "-p", "5433", "-c", "listen_addresses=127.0.0.1",
                       "-c", "unix_socket_directories=" + data, "-c", "fsync=off"]), os.path.join(work, "pg.log"))
    wait_for(lambda: subprocess.run([PG_BIN + "/pg_isready", "-q", "-h", "127.0.0.1", "-p", "5433"]).returncode == 0,
             30, "PostgreSQL taking connections")
    start(["dnsmasq", "--no-daemon", "--port", "5399", "--listen-address", "127.0.0.1", "--bind-interfaces",
           "--no-resolv", "--no-hosts", "--address=/#/192.0.2.1"], os.path.join(work, "dnsmasq.log"))
    policy = os.path.join(work, "policy.json")
    open(policy, "w").write(json.dumps({"version": 1, "web_filter": {"blocked_domains": ["reddit.com"]}}))
    gates = []
    for index, name in enumerate(["a", "b"]):
        state = os.path.join(work, name)
        subprocess.run([BIN, "web-password", "--state-dir", state], input=(PASSWORD + "\n").encode(), check=True,
                       stdout=subprocess.DEVNULL)
        dns, web = 5300 + index, 8443 + index
        log = os.path.join(work, name + ".log")
        start([BIN, "run", "--policy", policy, "--lists", os.path.join(HERE, "blocklists"), "--state-dir", state,
               "--timezone", "UTC", "--rate-limit", "0", "--dns-listen", "127.0.0.1:%d" % dns, "--proxy-listen=",
               "--upstream", "127.0.0.1:5399", "--web-listen", "127.0.0.1:%d" % web,
               "--web-http-listen", "127.0.0.1:%d" % (8080 + index),
               "--shared-store", "postgresql://phosra@127.0.0.1:5433/postgres?sslmode=disable",
               "--shared-store-password-file", pgpass], log)
        gates.append((dns, web, log))
    for _, _, log in gates:
        wait_for(lambda: "event=shared_store state=connected" in open(log).read(), 30, "the shared store connected")
        wait_for(lambda: "service=web" in open(log).read(), 30, "the page listening")

    response, body = api(gates[0][1], "/api/login", {"password": PASSWORD})
    cookie = response.getheader("Set-Cookie").split(";")[0]
    csrf = json.loads(body)["csrf_token"]
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.settimeout(2)
    second = gates[1][0]
    qid = 0

    def ask():
        global qid
        qid = (qid + 1) % 65536
        return query(sock, second, qid)

    wait_for(lambda: ask() == 0, 10, "the second gateway answering")
    if os.environ.get("LOAD") == "1":
        names = os.path.join(work, "queries")
        with open(names, "w") as out:
            for i in range(1000):
                out.write("name%d.example.org A\n" % i)
        for dns, _, _ in gates:
            start(["dnsperf", "-s", "127.0.0.1", "-p", str(dns), "-d", names, "-l", "600", "-c", "4", "-q", "100"],
                  os.path.join(work, "dnsperf-%d.log" % dns))
        time.sleep(2)
    times, posts = [], []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        api(gates[0][1], "/api/profiles/default/pause", {"minutes": 15}, cookie, csrf)
        posts.append((time.perf_counter() - started) * 1000)
        while ask() != 3:
            if time.perf_counter() - started > 10:
                raise SystemExit("bench-shared-pause: the pause did not reach the second gateway in 10 s")
            time.sleep(0.001)
        times.append((time.perf_counter() - started) * 1000)
        api(gates[0][1], "/api/profiles/default/resume", {}, cookie, csrf)
        wait_for(lambda: ask() == 0, 10, "the resume reaching the second gateway")
    times.sort()
    posts.sort()
    print("RESULT pause_to_block_ms load=%s n=%d median=%.1f p90=%.1f max=%.1f min=%.1f" % (
        os.environ.get("LOAD", "0"), len(times), statistics.median(times), times[int(len(times) * 0.9) - 1], times[-1], times[0]))
    print("RESULT pause_api_answer_ms load=%s n=%d median=%.1f max=%.1f" % (
        os.environ.get("LOAD", "0"), len(posts), statistics.median(posts), posts[-1]))
finally:
    for p in reversed(procs):
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(work, ignore_errors=True)
