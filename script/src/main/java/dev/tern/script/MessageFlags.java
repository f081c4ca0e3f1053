package dev.tern.script;

/**
 * The flags argument of send, sendto, sendmsg, recv, recvfrom and recvmsg ({@code MSG_PEEK|MSG_DONTWAIT}, or a
 * number): the flags the runner carries out, and for every other flag Linux has the reason Tern cannot (docs/SCRIPTS.md,
 * "Socket calls").
 */
final class MessageFlags {
    /** Receive: return the data without taking it (recv(2)). */
    static final int PEEK = 0x2;
    /** Send and receive: this call does not block, whatever the descriptor's O_NONBLOCK. */
    static final int DONTWAIT = 0x40;
    /** Receive: block until the whole length arrived (or the stream ended, or an error). */
    static final int WAITALL = 0x100;
    /** Send: no SIGPIPE with EPIPE; the runner has no signals, so it changes nothing. */
    static final int NOSIGNAL = 0x4000;
    /** Send: more data follows; a short tail waits as under TCP_CORK, for this call's output. */
    static final int MORE = 0x8000;
    /** Send: the call's last byte ends a record; no segment carries it with later bytes (TcpSocketOptions.endRecord). */
    static final int EOR = 0x80;
    /** sendto and sendmsg on TCP: a Fast Open connect with the data (RFC 7413), Linux's MSG_FASTOPEN. */
    static final int FASTOPEN = 0x20000000;
    /** Send: the call's id joins the send completions (SO_ZEROCOPY on); the bytes are copied all the same. */
    static final int ZEROCOPY = 0x4000000;
    /** recvmsg: read the socket's error queue, the send completions' notices. */
    static final int ERRQUEUE = 0x2000;
    private static final int RECEIVE_ALLOWED = PEEK | DONTWAIT | WAITALL;
    private static final int SEND_ALLOWED = DONTWAIT | NOSIGNAL | MORE | ZEROCOPY | EOR;

    private MessageFlags() {
    }

    /**
     * The send flags of argument {@code index} of {@code c}: DONTWAIT, NOSIGNAL, MORE, ZEROCOPY, EOR, and FASTOPEN for
     * sendto and sendmsg; any other is rejected.
     */
    static int send(ScriptRunner runner, ScriptLine.Call c, int index) {
        return parse(runner, c, index, true);
    }

    /**
     * The receive flags of argument {@code index} of {@code c}: PEEK, DONTWAIT, WAITALL, and ERRQUEUE for recvmsg;
     * any other is rejected.
     */
    static int receive(ScriptRunner runner, ScriptLine.Call c, int index) {
        return parse(runner, c, index, false);
    }

    private static int parse(ScriptRunner runner, ScriptLine.Call c, int index, boolean send) {
        final String text = c.args().get(index).replace(" ", "");
        final boolean fastOpen = send && (c.name().equals("sendto") || c.name().equals("sendmsg"));
        final boolean errorQueue = !send && c.name().equals("recvmsg");
        if (text.matches("\\d+|0x[0-9a-fA-F]+")) {
            // A number, as the suites write 0x0 and 0x20000000: Linux's bits, the same as the names'.
            final long value = Long.decode(text);
            final int allowed = send ? SEND_ALLOWED | (fastOpen ? FASTOPEN : 0)
                : RECEIVE_ALLOWED | (errorQueue ? ERRQUEUE : 0);
            if ((value & ~(long) allowed) != 0) {
                throw runner.failure(c.line(), c.name() + " flags " + text + " are not supported: "
                    + reason("", send, fastOpen));
            }
            return (int) value;
        }
        int flags = 0;
        for (String name : text.split("\\|")) {
            final int flag = switch (name) {
                case "MSG_DONTWAIT" -> DONTWAIT;
                case "MSG_NOSIGNAL" -> send ? NOSIGNAL : -1;
                case "MSG_MORE" -> send ? MORE : -1;
                case "MSG_EOR" -> send ? EOR : -1;
                case "MSG_FASTOPEN" -> fastOpen ? FASTOPEN : -1;
                case "MSG_ZEROCOPY" -> send ? ZEROCOPY : -1;
                case "MSG_ERRQUEUE" -> errorQueue ? ERRQUEUE : -1;
                case "MSG_PEEK" -> send ? -1 : PEEK;
                case "MSG_WAITALL" -> send ? -1 : WAITALL;
                default -> -1;
            };
            if (flag < 0) {
                throw runner.failure(c.line(), c.name() + " flag " + name + " is not supported: "
                    + reason(name, send, fastOpen));
            }
            flags |= flag;
        }
        return flags;
    }

    private static String reason(String name, boolean send, boolean fastOpen) {
        final String specific = send ? switch (name) {
            case "MSG_FASTOPEN" -> "a Fast Open connect goes with sendto or sendmsg on a TCP socket, not this call";
            case "MSG_CONFIRM", "MSG_DONTROUTE" -> "the runner has one route and no neighbour to confirm";
            case "MSG_OOB" -> "Tern does not implement urgent data";
            default -> null;
        } : switch (name) {
            case "MSG_ERRQUEUE" -> "the error queue, with send completions' notices only, is read with recvmsg";
            case "MSG_TRUNC" -> "the runner's reads report no datagram's full length";
            case "MSG_OOB" -> "Tern does not implement urgent data";
            default -> null;
        };
        return specific != null ? specific : send ? "send flags are MSG_DONTWAIT, MSG_NOSIGNAL, MSG_MORE, "
            + "MSG_ZEROCOPY and MSG_EOR"
            + (fastOpen ? " (and MSG_FASTOPEN on TCP)" : "")
            : "receive flags are MSG_PEEK, MSG_DONTWAIT and MSG_WAITALL";
    }
}
