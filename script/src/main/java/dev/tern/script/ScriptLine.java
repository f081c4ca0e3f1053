package dev.tern.script;

import java.util.List;

/** One statement of a script: a packet Tern must receive ({@code <}) or send ({@code >}), or a socket call. */
public sealed interface ScriptLine permits ScriptLine.Packet, ScriptLine.Datagram, ScriptLine.Icmp, ScriptLine.Call,
    ScriptLine.Sysctl, ScriptLine.TcpInfoAsserts, ScriptLine.SocketCount, ScriptLine.SocketDrop {
    /** The line number in the file, 1-based. */
    int line();

    When when();

    /**
     * When a statement happens: {@code 0.100} (seconds from the start), {@code +0.1} (after the previous statement),
     * a range {@code 0.1~0.2} or {@code +0.1~+0.2}, or {@code *} (any time; only for packets Tern sends).
     */
    record When(boolean any, long startNs, boolean startRelative, long endNs, boolean endRelative) {
        public static final When ANY = new When(true, 0, false, -1, false);

        public boolean isRange() {
            return !any && endNs >= 0;
        }
    }

    /**
     * One TCP option of a packet line, in the order written. A Fast Open option's values are its cookie's bytes (none:
     * a cookie request), or the one value {@link #TFO_COOKIE} for packetdrill's symbol of the server's cookie.
     */
    record Option(Kind kind, long[] values) {
        public enum Kind { MSS, WSCALE, SACK_OK, SACK, TIMESTAMP, NOP, EOL, FAST_OPEN, FAST_OPEN_EXPERIMENTAL }

        /** The value that stands for {@code TFO_COOKIE}: Tern's cookie for the runner's addresses. */
        static final long TFO_COOKIE = -1;

        boolean fastOpenSymbol() {
            return values.length == 1 && values[0] == TFO_COOKIE;
        }

        @Override
        public String toString() {
            return switch (kind) {
                case MSS -> "mss " + values[0];
                case WSCALE -> "wscale " + values[0];
                case SACK_OK -> "sackOK";
                case NOP -> "nop";
                case EOL -> "eol";
                case TIMESTAMP -> "TS val " + values[0] + " ecr " + values[1];
                case FAST_OPEN, FAST_OPEN_EXPERIMENTAL -> {
                    final StringBuilder text = new StringBuilder(kind == Kind.FAST_OPEN ? "FO" : "FOEXP");
                    if (fastOpenSymbol()) {
                        text.append(" TFO_COOKIE");
                    } else if (values.length > 0) {
                        text.append(' ');
                        for (long b : values) {
                            text.append(String.format("%02x", b));
                        }
                    }
                    yield text.toString();
                }
                case SACK -> {
                    final StringBuilder text = new StringBuilder("sack");
                    for (int i = 0; i + 1 < values.length; i += 2) {
                        text.append(' ').append(values[i]).append(':').append(values[i + 1]);
                    }
                    yield text.toString();
                }
            };
        }
    }

    /**
     * A TCP segment: {@code flags start:end(length) [ack N] [win N] [<options>]}. Sequence numbers are relative to
     * the sender's initial sequence number, ACK numbers and SACK blocks to the receiver's. {@code ack} and
     * {@code window} are -1 when not written; {@code options} is null when no option list was written.
     */
    record Packet(int line, When when, boolean inbound, Ports ports, IpFields ip, int flags, long seqStart, long seqEnd,
                  long ack, int window, List<Option> options, String text) implements ScriptLine {
        public int payloadLength() {
            return (int) (seqEnd - seqStart);
        }
    }

    /**
     * The IP header fields written before a packet, packetdrill's {@code [ect0]}, {@code [noecn]}, {@code [ce]},
     * {@code [ect1]}, {@code [ect01]} (either ECT, Tern's packets only), {@code (tos 0x10)} and {@code (ttl 64)}:
     * what {@code check} compares of the TOS byte (its ECN field, either ECT codepoint, the whole byte, or nothing),
     * with {@code value}; {@code ttl} 0 when not written. An injected packet carries them (TOS 0 and TTL 64 when not
     * written). {@code flowLabel} is packetdrill's {@code (flowlabel 0xN)} of an IPv6 packet, alone or after the TOS
     * field ({@code (tos 0x10, flowlabel 0x1)}); 0 when not written. On a {@code >} line it is a name for Tern's
     * label, as packetdrill's: the same name the same label on the connection, another name another label.
     */
    record IpFields(TosCheck check, int value, int ttl, int flowLabel) {
        static final IpFields NONE = new IpFields(TosCheck.NONE, 0, 0, 0);

        /** The fields with {@code flowLabel} as the flow label. */
        IpFields withFlowLabel(int label) {
            return new IpFields(check, value, ttl, label);
        }

        /** The TOS byte of an injected packet. */
        int tos() {
            return check == TosCheck.NONE ? 0 : value;
        }
    }

    /** What a packet line says of the TOS byte. */
    enum TosCheck { NONE, ECN, EITHER_ECT, TOS }

    /**
     * The ports written before a packet, {@code SOURCE>DESTINATION} in the packet's direction (Tern's extension of
     * the syntax, for scripts with several connections): {@code 48001>8080} on a {@code <} line, {@code 8080>48001}
     * on a {@code >} line. Null on a line that names no ports: the line is about the current flow.
     */
    record Ports(int source, int destination) {
        @Override
        public String toString() {
            return source + ">" + destination;
        }
    }

    /**
     * A UDP datagram, {@code udp (LENGTH)}: its payload is the remote's pattern when injected, compared by length and
     * bytes when expected; with the IP header fields written before it ({@link IpFields}, no ECN codepoint).
     */
    record Datagram(int line, When when, boolean inbound, Ports ports, IpFields ip, int length, String text)
        implements ScriptLine {
    }

    /**
     * An ICMP message, packetdrill's {@code icmp TYPE [CODE] [mtu N] [id N] [QUOTED]}. An error quotes the packet it
     * is about (a TCP segment {@code [START:END(LENGTH)]} or a datagram {@code [udp (LENGTH)]}, of the current flow
     * unless it names its ports, {@code [8080>48001 1:1461(1460)]}); null when the line quotes none. Another type
     * (echo) has {@code rawLength}, the message's length with its header ({@code [raw (N)]}). {@code mtu},
     * {@code id} and {@code rawLength} are -1 when not written. {@code ip} holds the IP header fields written before
     * it ({@link IpFields}).
     */
    record Icmp(int line, When when, boolean inbound, IpFields ip, int type, int code, int mtu, int id, int rawLength,
                ScriptLine quoted, String text) implements ScriptLine {
    }

    /**
     * A socket call, {@code name(arg, ...) = result [ERRNO [(text)]]}; arguments are kept as written (top-level
     * commas split them) and read by the runner, which knows each call. A blocking call that spans time,
     * {@code START...END call(...)}, returns at {@code returnNs} (from the start of the script, or after the call's
     * start when {@code returnRelative}); {@code returnNs} is -1 for a call that returns at once.
     */
    record Call(int line, When when, String name, List<String> args, long result, String errno, String text,
                long returnNs, boolean returnRelative) implements ScriptLine {
        public boolean spansTime() {
            return returnNs >= 0;
        }
    }

    /**
     * A packetdrill Python block, {@code %{ ... }%}, read as the asserts on TCP_INFO it holds (the subset
     * {@link TcpInfoAssert} reads; nothing else is accepted): checked at its time against the socket under test.
     */
    record TcpInfoAsserts(int line, When when, List<TcpInfoAssert> asserts) implements ScriptLine {
    }

    /**
     * A kernel setting from a shell line ({@code `sysctl -q net.ipv4.NAME=VALUE`}, {@code `sysctl -w
     * net.inet.tcp.NAME=VALUE`}, ...; {@link ScriptShell} reads them) or a packetdrill option line
     * ({@code --tolerance_usecs=N}, ..., named as written with the dashes; a flag has the value 1), which
     * {@link ScriptSettings} applies to the profile. {@code values} holds one number, or three for {@code tcp_mem}
     * and {@code tcp_wmem} (written between quotes). It happens at {@code when} (an option line at {@code +0}).
     */
    record Sysctl(int line, When when, String name, long[] values) implements ScriptLine {
        /** The time of a line written without one: after the previous line. */
        static final When NEXT = new When(false, 0, true, -1, false);

        /** The setting's (first) number. */
        public long value() {
            return values[0];
        }
    }

    /**
     * The FreeBSD suite's check of how many TCP sockets are in a state,
     * {@code `sockstat -4 -P tcp -s [-p PORT] | [grep packetdril |] grep -c STATE | grep N`}: {@code state} is
     * sockstat's name ({@code TIME_WAIT}, {@code SYN_RCVD}, ...), {@code port} the one {@code -p} names (-1: any);
     * {@code applicationOnly} when {@code grep packetdril} keeps the process's own sockets only, without the
     * sockets of no process (a listener's half-open connections, which FreeBSD lists as SYN_RCVD); {@code ipv6} for
     * {@code sockstat -6}, which lists IPv6 sockets only (FreeBSD's AF_INET6 sockets are IPv6-only by default).
     */
    record SocketCount(int line, When when, String state, int port, boolean applicationOnly, boolean ipv6, int count,
                       String text) implements ScriptLine {
    }

    /**
     * FreeBSD's {@code `tcpdrop -s STATE`}: the application's TCP connections in the state (sockstat's name) are
     * dropped, as an abort drops them (a RST in a synchronized state but TIME-WAIT).
     */
    record SocketDrop(int line, When when, String state, String text) implements ScriptLine {
    }
}
