"""Compiles Python sources read from stdin, for msgcontract's escaping
fuzz target: each request is a line with a byte count, then that many bytes
of UTF-8 source; each answer is "ok" or the SyntaxError, on one line."""
import sys

def main() -> None:
    inp, out = sys.stdin.buffer, sys.stdout
    while True:
        n = inp.readline()
        if not n:
            return
        src = inp.read(int(n))
        try:
            compile(src, "gen.py", "exec")
            answer = "ok"
        except (SyntaxError, ValueError) as e:
            answer = repr(e).replace("\n", " ")
        out.write(answer + "\n")
        out.flush()

main()
