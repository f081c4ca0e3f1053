#!/usr/bin/env python3
"""Writes conformance/scripts/state-*.pkt: RFC 9293's synchronized states against every kind of segment (13 kinds).

One script per state. Each event gets a fresh connection (the remote's ports 48001, 48002, ...), brought into the state
through real segments and socket calls, so one event's outcome never changes the next one's starting point. After
the event the script checks what Tern sends back (or that it sends nothing) and the state through TCP_INFO. The
expected outcomes are RFC 9293 §3.10.7.4 with RFC 5961 (challenge ACKs) and RFC 1337 (a RST does not end
TIME-WAIT); they are the same table as tcp's StateEventTableTest, here on the wire in packetdrill's syntax.

Run it from the repository root after changing it: python3 conformance/scripts/generate/state-matrix.py
The .pkt files are committed; ScriptCorpusTest runs them like every other script.
"""
import pathlib

M = 1 << 32

# Every connection: the remote connects from its own port, without options (short segments, an unscaled window),
# and each side sends 10 bytes, so RCV.NXT and SND.NXT are 11 in ESTABLISHED.
ESTABLISHED = [
    "+0    < {p}>8080 S 0:0(0) win 65535 <mss 1460>",
    "+0    > 8080>{p} S. 0:0(0) ack 1 <mss 1460>",
    "+0    < . 1:1(0) ack 1 win 65535",
    "+0    accept(3, ..., ...) = {fd}",
    "+0    < P. 1:11(10) ack 1 win 65535",
    "+0    > . 1:1(0) ack 11",
    "+0    read({fd}, ..., 100) = 10",
    "+0    write({fd}, ..., 10) = 10",
    "+0    > P. 1:11(10) ack 11",
    "+0    < . 11:11(0) ack 11 win 65535",
]
SHUTDOWN = ["+0    shutdown({fd}, SHUT_WR) = 0", "+0    > F. 11:11(0) ack {rcv}"]

# state: (how it is reached, RCV.NXT, SND.NXT, SND.UNA, the peer's FIN received, can receive data, TCP_INFO name,
#         description)
STATES = {
    "established": (ESTABLISHED, 11, 11, 11, False, True, "TCP_ESTABLISHED",
                    "both sides sent and acknowledged 10 bytes"),
    "fin-wait-1": (ESTABLISHED + [s.replace("{rcv}", "11") for s in SHUTDOWN], 11, 12, 11, False, True,
                   "TCP_FIN_WAIT1", "Tern shut down its side (shutdown SHUT_WR); its FIN is not acknowledged"),
    "fin-wait-2": (ESTABLISHED + [s.replace("{rcv}", "11") for s in SHUTDOWN]
                   + ["+0    < . 11:11(0) ack 12 win 65535"], 11, 12, 12, False, True, "TCP_FIN_WAIT2",
                   "Tern's FIN is acknowledged; the remote has not closed"),
    "close-wait": (ESTABLISHED + ["+0    < F. 11:11(0) ack 11 win 65535", "+0    > . 11:11(0) ack 12"],
                   12, 11, 11, True, False, "TCP_CLOSE_WAIT", "the remote closed first; Tern has not"),
    "last-ack": (ESTABLISHED + ["+0    < F. 11:11(0) ack 11 win 65535", "+0    > . 11:11(0) ack 12"]
                 + [s.replace("{rcv}", "12") for s in SHUTDOWN], 12, 12, 11, True, False, "TCP_LAST_ACK",
                 "CLOSE-WAIT, then Tern's FIN, not acknowledged"),
    "closing": (ESTABLISHED + [s.replace("{rcv}", "11") for s in SHUTDOWN]
                + ["+0    < F. 11:11(0) ack 11 win 65535", "+0    > . 12:12(0) ack 12"], 12, 12, 11, True, False,
                "TCP_CLOSING", "both FINs crossed: the remote's came before it acknowledged Tern's"),
    "time-wait": (ESTABLISHED + [s.replace("{rcv}", "11") for s in SHUTDOWN]
                  + ["+0    < . 11:11(0) ack 12 win 65535", "+0    < F. 11:11(0) ack 12 win 65535",
                     "+0    > . 12:12(0) ack 12"], 12, 12, 12, True, False, "TCP_TIME_WAIT",
                  "FIN-WAIT-2, then the remote's FIN"),
}


def seq(n):
    return n % M


def events(state):
    """(name, RFC section, the remote's segment, Tern's answer or None, the state after)."""
    _, rcv, snd, una, fin, can_receive, name, _ = STATES[state]
    ack = f"> . {snd}:{snd}(0) ack {rcv}"
    rows = []
    if state in ("established", "fin-wait-1", "fin-wait-2", "close-wait"):
        after_rst = "TCP_CLOSE"
        rst_note = "the connection is reset (ECONNRESET)"
    elif state == "time-wait":
        after_rst, rst_note = name, "ignored in TIME-WAIT (RFC 1337 §3, which RFC 9293 §3.10.7.4 allows)"
    else:
        after_rst, rst_note = "TCP_CLOSE", "the connection is closed quietly (no error: Tern had closed its side)"
    rows.append(("RST at RCV.NXT: " + rst_note, "RFC 9293 §3.10.7.4, RFC 5961 §3.2",
                 f"< R {rcv}:{rcv}(0) win 0", None, after_rst))
    rows.append(("RST in the window but not at RCV.NXT: a challenge ACK", "RFC 5961 §3.2",
                 f"< R {seq(rcv + 10)}:{seq(rcv + 10)}(0) win 0", ack, name))
    rows.append(("RST outside the window: dropped silently", "RFC 9293 §3.10.7.4, RFC 5961 §3.2",
                 f"< R {seq(rcv + 100000)}:{seq(rcv + 100000)}(0) win 0", None, name))
    if state == "time-wait":
        # A listener holds the port: the SYN opens a new incarnation of the connection, with an ISN above the old
        # SND.NXT (Linux's choice, SND.NXT + 65535 + 2).
        rows.append(("SYN above RCV.NXT, the port listening: a new connection replaces TIME-WAIT",
                     "RFC 9293 §3.10.7.4 TIME-WAIT, RFC 1122 §4.2.2.13, RFC 6191 §2",
                     f"< S {seq(rcv + 5)}:{seq(rcv + 5)}(0) win 65535 <mss 1460>",
                     f"> S. {snd + 65538}:{snd + 65538}(0) ack {rcv + 6} <mss 1460>", "TCP_CLOSE"))
    else:
        rows.append(("SYN in the window: a challenge ACK", "RFC 5961 §4.2",
                     f"< S {seq(rcv + 5)}:{seq(rcv + 5)}(0) win 65535", ack, name))
    rows.append(("SYN outside the window: a challenge ACK too", "RFC 5961 §4.2",
                 f"< S {seq(rcv - 100000)}:{seq(rcv - 100000)}(0) win 65535", ack, name))
    rows.append(("SYN-ACK in the window: a challenge ACK, as any SYN", "RFC 5961 §4.2",
                 f"< S. {seq(rcv + 5)}:{seq(rcv + 5)}(0) ack {una} win 65535", ack, name))
    rows.append(("an ACK of data Tern never sent: answered with an ACK, dropped", "RFC 9293 §3.10.7.4, RFC 5961 §5.2",
                 f"< . {rcv}:{rcv}(0) ack {seq(snd + 1000)} win 65535", ack, name))
    rows.append(("an ACK older than SND.UNA - MAX.SND.WND: answered with an ACK, dropped", "RFC 5961 §5.2",
                 f"< . {rcv}:{rcv}(0) ack {seq(una - 200000)} win 65535", ack, name))
    if can_receive:
        # Tern's reply came at once after the remote's 10 bytes: the exchange is interactive (Linux's pingpong
        # mode), so the ACK waits for the delayed ACK time.
        rows.append(("data in the window: taken and acknowledged, by the delayed ACK as the exchange is interactive",
                     "RFC 9293 §3.10.7.4 (seventh), RFC 1122 §4.2.3.2",
                     f"< P. {rcv}:{rcv + 3}(3) ack {una} win 65535", f"+.04  > . {snd}:{snd}(0) ack {rcv + 3}", name))
    elif state == "time-wait":
        rows.append(("data after the remote's FIN: the text ignored", "RFC 9293 §3.10.7.4 (seventh: CLOSE-WAIT, "
                     "CLOSING, LAST-ACK, TIME-WAIT)), and answered with an ACK, as Linux and FreeBSD answer all but a "
                     "bare ACK at RCV.NXT in TIME-WAIT (TCP.md",
                     f"< P. {rcv}:{rcv + 3}(3) ack {una} win 65535", ack, name))
    else:
        rows.append(("data after the remote's FIN: ignored", "RFC 9293 §3.10.7.4 (seventh: CLOSE-WAIT, CLOSING, "
                     "LAST-ACK, TIME-WAIT)", f"< P. {rcv}:{rcv + 3}(3) ack {una} win 65535", None, name))
    rows.append(("data beyond the window: not acceptable, answered with an ACK and dropped",
                 "RFC 9293 §3.10.7.4 (first: \"If an incoming segment is not acceptable, an acknowledgment should be "
                 "sent\")", f"< P. {seq(rcv + 100000)}:{seq(rcv + 100003)}(3) ack {una} win 65535", ack, name))
    old = rcv - 3 - (1 if fin else 0)
    rows.append(("an old duplicate (data already received): acknowledged again, not delivered",
                 "RFC 9293 §3.10.7.4 (first)", f"< P. {old}:{old + 3}(3) ack {una} win 65535", ack, name))
    if not fin:
        after_fin = {"established": "TCP_CLOSE_WAIT", "fin-wait-1": "TCP_CLOSING",
                     "fin-wait-2": "TCP_TIME_WAIT"}[state]
        rows.append(("the remote's FIN: acknowledged, " + after_fin, "RFC 9293 §3.10.7.4 (eighth)",
                     f"< F. {rcv}:{rcv}(0) ack {una} win 65535", f"> . {snd}:{snd}(0) ack {rcv + 1}", after_fin))
    else:
        rows.append(("a retransmitted FIN: acknowledged again" + (", TIME-WAIT restarts" if state == "time-wait" else ""),
                     "RFC 9293 §3.10.7.4 (eighth)", f"< F. {rcv - 1}:{rcv - 1}(0) ack {una} win 65535", ack, name))
    rows.append(("data without the ACK flag: dropped", "RFC 9293 §3.10.7.4 (fifth: \"if the ACK bit is off, drop the "
                 "segment\")", f"< P {rcv}:{rcv + 3}(3) win 65535", None, name))
    return rows


def script(state):
    reach, rcv, snd, una, fin, can_receive, name, how = STATES[state]
    title = state.upper()
    lines = [
        f"// RFC 9293 §3.10.7.4 state x event matrix: {title} against each kind of segment (with RFC 5961).",
        f"// {title} here: {how}.",
        "// Each event on its own connection (the remote's port 48001, 48002, ...), reached through real segments;",
        "// then what Tern answers (or that it answers nothing) and the state, through TCP_INFO.",
        f"// Numbers in {title}: RCV.NXT {rcv}, SND.NXT {snd}, SND.UNA {una}.",
        "// Generated by conformance/scripts/generate/state-matrix.py: change that, not this file.",
        "0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3",
        "+0    bind(3, ..., ...) = 0",
        "+0    listen(3, 100) = 0",
    ]
    fd = 4
    for i, (what, rfc, segment, answer, after) in enumerate(events(state)):
        port = 48001 + i
        lines.append("")
        lines.append(f"// {what} ({rfc}).")
        lines += [s.replace("{p}", str(port)).replace("{fd}", str(fd)) for s in reach]
        lines.append(f"+0    getsockopt({fd}, IPPROTO_TCP, TCP_INFO, {{tcpi_state={name}}}, [...]) = 0")
        lines.append("+0    " + segment)
        if answer is not None:
            lines.append(answer if answer.startswith("+") else "+0    " + answer)
        lines.append(f"+0    getsockopt({fd}, IPPROTO_TCP, TCP_INFO, {{tcpi_state={after}}}, [...]) = 0")
        if after == "TCP_CLOSE" and state in ("established", "fin-wait-1", "fin-wait-2", "close-wait"):
            lines.append(f"+0    getsockopt({fd}, SOL_SOCKET, SO_ERROR, [ECONNRESET], [4]) = 0")
        fd += 1
    return "\n".join(lines) + "\n"


def main():
    directory = pathlib.Path(__file__).resolve().parent.parent
    for state in STATES:
        (directory / f"state-{state}.pkt").write_text(script(state))


if __name__ == "__main__":
    main()
