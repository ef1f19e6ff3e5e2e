"""A throw-away single-node Slurm for the job tests: munged with its own key and socket, and
slurmctld + slurmd (Debian slurm-wlm) on 127.0.0.1 with a slurm.conf written to a temporary
folder, on free ports. Nothing outside that folder is read or written; every process it
starts (and every process whose command line or environment names the folder, such as the
slurmstepd of a job) is killed when the cluster is stopped, also after a failure.

    with SlurmLocal(tmpdir) as s:      # raises Unavailable(reason) when it cannot start
        s.run(["sbatch", ...])         # the Slurm commands, with SLURM_CONF set
"""
import os
import shutil
import signal
import socket
import subprocess
import time


class Unavailable(Exception):
    """The cluster could not start; str() says why."""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class SlurmLocal:
    def __init__(self, root, cpus=2):
        self.root = os.path.abspath(root)
        self.cpus = cpus
        self.procs = []
        self.env = dict(os.environ)

    # -- setup ------------------------------------------------------------------------------

    def _munge(self):
        os.makedirs(self.root, exist_ok=True)
        key = os.path.join(self.root, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.sock = os.path.join(self.root, "munge.socket")
        args = ["munged", "--foreground", "--key-file=" + key, "--socket=" + self.sock,
                "--pid-file=" + os.path.join(self.root, "munged.pid"),
                "--log-file=" + os.path.join(self.root, "munged.log"),
                "--seed-file=" + os.path.join(self.root, "munged.seed"), "--num-threads=2"]
        if os.geteuid() == 0:
            args.append("--force")  # munged refuses root without it
        self._start("munged", args)
        for _ in range(100):
            if os.path.exists(self.sock):
                return
            time.sleep(0.05)
        raise Unavailable("munged did not create its socket: " + self._log("munged.log"))

    def _conf(self):
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        host = socket.gethostname().split(".")[0]
        for d in ("state", "spool", "log"):
            os.makedirs(os.path.join(self.root, d), exist_ok=True)
        r = self.root
        with open("/proc/meminfo") as f:
            mem_mb = int(f.readline().split()[1]) // 1024
        conf = f"""ClusterName=tpuproftest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.sock}
StateSaveLocation={r}/state
SlurmdSpoolDir={r}/spool
SlurmctldPidFile={r}/slurmctld.pid
SlurmdPidFile={r}/slurmd.pid
SlurmctldLogFile={r}/log/slurmctld.log
SlurmdLogFile={r}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
SwitchType=switch/none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName={host} NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={mem_mb} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""
        self.conf = os.path.join(r, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(conf)
        # slurmd reads cgroup.conf only for the cgroup plugins; an empty one keeps it quiet.
        open(os.path.join(r, "cgroup.conf"), "w").close()
        self.env["SLURM_CONF"] = self.conf

    def _start(self, name, args):
        log = open(os.path.join(self.root, name + ".out"), "w")
        p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                             start_new_session=True)
        log.close()
        self.procs.append(p)
        return p

    def _log(self, name):
        try:
            with open(os.path.join(self.root, name), errors="replace") as f:
                return " | ".join(f.read().strip().splitlines()[-5:])
        except OSError:
            return "(no log)"

    def start(self):
        for cmd in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo"):
            if not shutil.which(cmd):
                raise Unavailable(cmd + " is not installed (scripts/deps.sh test: slurm-wlm, "
                                  "munge)")
        try:
            self._munge()
            self._conf()
            self._start("slurmctld", ["slurmctld", "-D", "-i", "-f", self.conf])
            self._start("slurmd", ["slurmd", "-D", "-f", self.conf])
            self._wait_idle()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_idle(self, timeout=60):
        end = time.time() + timeout
        last = ""
        while time.time() < end:
            for p, name in zip(self.procs, ("munged", "slurmctld", "slurmd")):
                if p.poll() is not None:
                    raise Unavailable("%s exited with %d: %s" % (
                        name, p.returncode, self._log(name + ".out") + " " +
                        self._log(os.path.join("log", name + ".log"))))
            r = self.run(["sinfo", "-h", "-o", "%T"], check=False)
            last = (r.stdout + r.stderr).strip()
            if r.returncode == 0 and last in ("idle", "idle~", "mixed"):
                return
            time.sleep(0.5)
        raise Unavailable("the node did not become idle in %d s (sinfo: %s; slurmctld: %s; "
                          "slurmd: %s)" % (timeout, last, self._log("log/slurmctld.log"),
                                           self._log("log/slurmd.log")))

    # -- use --------------------------------------------------------------------------------

    def run(self, args, check=True, timeout=120):
        r = subprocess.run(args, capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and r.returncode:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr))
        return r

    # -- teardown ---------------------------------------------------------------------------

    def _strays(self):
        """Pids of processes that name our folder (job steps the daemons started)."""
        pids = []
        me = os.getpid()
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) == me:
                continue
            try:
                with open("/proc/%s/cmdline" % d, "rb") as f:
                    cmd = f.read()
                with open("/proc/%s/environ" % d, "rb") as f:
                    env = f.read()
            except OSError:
                continue
            if self.root.encode() in cmd or self.root.encode() in env:
                pids.append(int(d))
        return pids

    def stop(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for pid in self._strays():
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.procs = []

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
