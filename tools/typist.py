#!/usr/bin/env python3
"""A person at the serial console (issue 48): tools/typist.py PORT LOG REPORT

Connects to Bochs's COM1 (mode=socket-server on 127.0.0.1:PORT), copies
every byte it receives into LOG (the run's serial log, as mode=file would
have written it), and acts as someone typing at the guest's shell:

  - waits for the shell's prompt ("# " ending the console's output) before
    typing anything, then for the console to be quiet for a while;
  - types COMMANDS one character at a time (a pause between characters, as
    a person types), Enter, and times each until its answer arrives;
  - a long output line and one without a newline (the prompt follows it on
    the same row);
  - last, what ends the run: the guest's verdict and `exit` (the initramfs
    powers the machine off when its shell exits).

REPORT gets one line per measurement ("typist: ..."), read by
test/run-tests.sh, which compares a run under the hypervisor with the same
run bare. The times are wall-clock seconds: both runs type at the same
pace into the same emulator on the same machine.
"""
import re
import socket
import sys
import threading
import time

PROMPT_ROW = re.compile(rb"[/~][^ ]* ?[#$] ")   # busybox's "/ # ", at the start of a row
CHAR_GAP = 0.05          # seconds between typed characters
QUIET = 3.0              # the console idle this long before typing starts
WAIT_PROMPT = 900.0      # the boot to the shell's first prompt
WAIT_ANSWER = 60.0       # one command's answer


class Console:
    def __init__(self, sock, log):
        self.sock, self.log = sock, log
        self.buf = b""
        self.last = time.monotonic()
        self.lock = threading.Condition()
        self.closed = False
        threading.Thread(target=self.reader, daemon=True).start()

    def reader(self):
        while True:
            try:
                data = self.sock.recv(4096)
            except OSError:
                data = b""
            with self.lock:
                if not data:
                    self.closed = True
                    self.lock.notify_all()
                    return
                self.log.write(data)
                self.log.flush()
                self.buf += data
                self.last = time.monotonic()
                self.lock.notify_all()

    def wait(self, pred, timeout):
        end = time.monotonic() + timeout
        with self.lock:
            while not pred(self.buf):
                left = end - time.monotonic()
                if left <= 0 or self.closed:
                    return False
                self.lock.wait(min(left, 0.2))
            return True

    def quiet(self, secs, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self.lock:
                idle = time.monotonic() - self.last
            if idle >= secs:
                return True
            time.sleep(0.1)
        return False

    def type(self, text):
        for ch in text:
            self.sock.sendall(ch.encode())
            time.sleep(CHAR_GAP)

    def mark(self):
        with self.lock:
            return len(self.buf)


ESC = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def clean(b):
    """The bytes as a person reads them: terminal control sequences (the
    shell's cursor-position query, colours) and carriage returns dropped."""
    return ESC.sub(b"", b).replace(b"\r", b"")


def rows(b):
    return clean(b).split(b"\n")


def answered(b, answer):
    """The answer on a row of its own, or followed on its row by a kernel
    line (printk writes where the cursor is: "typed-3 21[    5.781386]
    clocksource: ...", as a person at the console reads it)."""
    kernel = re.compile(re.escape(answer) + rb"\[ *[0-9]+\.[0-9]+\] ")
    return any(r == answer or kernel.match(r) for r in rows(b))


def prompted(b):
    """A shell prompt came: a row that starts with one (a kernel line may
    follow it on the same row, as on any console)."""
    return any(PROMPT_ROW.match(r) for r in rows(b))


def main():
    port, logpath, reportpath = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    out = open(reportpath, "w")

    def say(line):
        out.write("typist: " + line + "\n")
        out.flush()

    sock, t0 = None, time.monotonic()
    while time.monotonic() - t0 < 120:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            break
        except OSError:
            time.sleep(0.5)
    if sock is None:
        say("error: no Bochs listening on 127.0.0.1:%d after 120 s" % port)
        return 1
    sock.settimeout(None)
    con = Console(sock, open(logpath, "ab"))
    t_boot = time.monotonic()
    shell = b"hv.init=shell"
    if not con.wait(lambda b: shell in b and prompted(b[b.index(shell):]), WAIT_PROMPT):
        say("error: no prompt after %.0f s" % (time.monotonic() - t_boot))
        return 1
    say("prompt seen after %.1f s, before anything was typed" % (time.monotonic() - t_boot))
    if not con.quiet(QUIET, 120):
        say("error: the console never went quiet for %.0f s" % QUIET)
        return 1
    failed = False
    for k in range(1, 6):
        cmd = "echo typed-%d $((%d*7))" % (k, k)
        answer = b"typed-%d %d" % (k, k * 7)
        start = con.mark()
        con.type(cmd)
        echoed = con.wait(lambda b: cmd.encode() in clean(b[start:]), 10)
        t = time.monotonic()
        con.sock.sendall(b"\r")
        ok = con.wait(lambda b: answered(b[start:], answer) and prompted(b[start:].split(answer, 1)[-1]), WAIT_ANSWER)
        dt = time.monotonic() - t
        say("command %d answered=%s echo=%s seconds=%.3f" % (k, "yes" if ok else "no", "yes" if echoed else "no", dt))
        failed |= not ok
        con.quiet(1.0, 30)
    # A long line, and a line without its newline: the prompt on its row.
    start = con.mark()
    con.type("printf '%0700d\\n' 7\r")
    long_ok = con.wait(lambda b: b"0" * 699 + b"7" in rows(b[start:]), WAIT_ANSWER)
    say("long line whole=%s" % ("yes" if long_ok else "no"))
    con.quiet(1.0, 30)
    start = con.mark()
    con.type("printf nonl-%s x\r")
    nonl_ok = con.wait(lambda b: any(re.fullmatch(rb"nonl-x[/~]* ?[#$] ", r) for r in rows(b[start:])), WAIT_ANSWER)
    say("no newline, prompt on its row=%s" % ("yes" if nonl_ok else "no"))
    con.quiet(1.0, 30)
    # (the echo of this line must not read as the guest's own "guest: " line)
    con.type("echo gues\"t: verdict pass\"; /bin/hvcall verdict pass; exit 0\r")
    con.wait(lambda b: False, 120)            # until Bochs ends (the socket closes) or 120 s
    say("done closed=%s" % ("yes" if con.closed else "no"))
    return 1 if failed or not long_ok or not nonl_ok else 0


if __name__ == "__main__":
    sys.exit(main())
