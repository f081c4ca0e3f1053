package dev.tern.tcp.wire;

/** The control bits of the TCP header (RFC 9293 §3.1, RFC 3168 for ECE/CWR), plus {@link #format(int)} for printing. */
public final class TcpFlags {
    public static final int FIN = 0x01;
    public static final int SYN = 0x02;
    public static final int RST = 0x04;
    public static final int PSH = 0x08;
    public static final int ACK = 0x10;
    public static final int URG = 0x20;
    public static final int ECE = 0x40;
    public static final int CWR = 0x80;

    private TcpFlags() {
    }

    /** tcpdump's notation: {@code [S.]} for SYN+ACK, {@code [P.]} for PSH+ACK, {@code [R]}, {@code [F.]}. */
    public static String format(int flags) {
        final StringBuilder text = new StringBuilder("[");
        if ((flags & FIN) != 0) {
            text.append('F');
        }
        if ((flags & SYN) != 0) {
            text.append('S');
        }
        if ((flags & RST) != 0) {
            text.append('R');
        }
        if ((flags & PSH) != 0) {
            text.append('P');
        }
        if ((flags & URG) != 0) {
            text.append('U');
        }
        if ((flags & ECE) != 0) {
            text.append('E');
        }
        if ((flags & CWR) != 0) {
            text.append('W');
        }
        if ((flags & ACK) != 0) {
            text.append('.');
        }
        return text.append(']').toString();
    }
}
