package dev.tern.tcp.testing;

import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpRepr;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A segment written as differences from a template: {@code SEG.seq(REMOTE_ISS + 1).flags(FIN | ACK)}. Unset fields
 * take defaults when the peer sends it (the harness's ports, window 65535, no options) and are not checked when it
 * is expected. Immutable: every setter returns a copy.
 */
public final class Seg implements FrameCheck {
    public static final Seg SEG = new Seg();
    public static final Seg SYN = SEG.flags(TcpFlags.SYN);
    public static final Seg SYN_ACK = SEG.flags(TcpFlags.SYN | TcpFlags.ACK);
    public static final Seg ACK = SEG.flags(TcpFlags.ACK);
    public static final Seg PSH_ACK = SEG.flags(TcpFlags.PSH | TcpFlags.ACK);
    public static final Seg FIN_ACK = SEG.flags(TcpFlags.FIN | TcpFlags.ACK);
    public static final Seg RST = SEG.flags(TcpFlags.RST);
    public static final Seg RST_ACK = SEG.flags(TcpFlags.RST | TcpFlags.ACK);

    Integer sourcePort;
    Integer destinationPort;
    Integer seq;
    Integer ack;
    Integer flags;
    Integer window;
    Integer mss;
    Integer windowScale;
    Boolean sackPermitted;
    Integer tsVal;
    Integer tsEcr;
    int[] sackBlocks;
    byte[] payload;
    Integer payloadLength;
    /** The Fast Open option's cookie (empty: a request); null: no option sent, not checked when expected. */
    byte[] fastOpenCookie;
    boolean fastOpenExperimental;
    /** The IP header's ECN field (RFC 3168 §5: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE); null: 0 sent, not checked. */
    Integer ipEcn;

    private Seg() {
    }

    private Seg copy() {
        final Seg s = new Seg();
        s.sourcePort = sourcePort;
        s.destinationPort = destinationPort;
        s.seq = seq;
        s.ack = ack;
        s.flags = flags;
        s.window = window;
        s.mss = mss;
        s.windowScale = windowScale;
        s.sackPermitted = sackPermitted;
        s.tsVal = tsVal;
        s.tsEcr = tsEcr;
        s.sackBlocks = sackBlocks;
        s.payload = payload;
        s.payloadLength = payloadLength;
        s.fastOpenCookie = fastOpenCookie;
        s.fastOpenExperimental = fastOpenExperimental;
        s.ipEcn = ipEcn;
        return s;
    }

    /** A Fast Open option (RFC 7413) with this cookie (none: a cookie request), kind 34 or the experimental 254. */
    public Seg fastOpen(byte[] cookie, boolean experimental) {
        final Seg s = copy();
        s.fastOpenCookie = cookie;
        s.fastOpenExperimental = experimental;
        return s;
    }

    public Seg ports(int source, int destination) {
        final Seg s = copy();
        s.sourcePort = source;
        s.destinationPort = destination;
        return s;
    }

    public Seg seq(int value) {
        final Seg s = copy();
        s.seq = value;
        return s;
    }

    public Seg ack(int value) {
        final Seg s = copy();
        s.ack = value;
        return s;
    }

    public Seg flags(int value) {
        final Seg s = copy();
        s.flags = value;
        return s;
    }

    public Seg window(int value) {
        final Seg s = copy();
        s.window = value;
        return s;
    }

    public Seg mss(int value) {
        final Seg s = copy();
        s.mss = value;
        return s;
    }

    public Seg wscale(int value) {
        final Seg s = copy();
        s.windowScale = value;
        return s;
    }

    public Seg sackOk() {
        final Seg s = copy();
        s.sackPermitted = true;
        return s;
    }

    public Seg ts(int value, int echo) {
        final Seg s = copy();
        s.tsVal = value;
        s.tsEcr = echo;
        return s;
    }

    /** Expect (or send) a timestamp option echoing {@code echo}, whatever its TSval. */
    public Seg tsEcr(int echo) {
        final Seg s = copy();
        s.tsEcr = echo;
        return s;
    }

    /** SACK blocks as left, right pairs; none to say "no SACK option". */
    public Seg sack(int... blocks) {
        final Seg s = copy();
        s.sackBlocks = blocks;
        return s;
    }

    public Seg payload(byte[] bytes) {
        final Seg s = copy();
        s.payload = bytes;
        s.payloadLength = bytes.length;
        return s;
    }

    public Seg payload(String text) {
        return payload(text.getBytes(StandardCharsets.US_ASCII));
    }

    /** The IP ECN field to send (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE), or to expect. */
    public Seg ipEcn(int codepoint) {
        final Seg s = copy();
        s.ipEcn = codepoint;
        return s;
    }

    /** The TOS byte the peer's IP header carries: its ECN field, if set. */
    int tos() {
        return ipEcn != null ? ipEcn : 0;
    }

    /** Expect this many payload bytes, whatever they are. */
    public Seg len(int length) {
        final Seg s = copy();
        s.payloadLength = length;
        return s;
    }

    /** The header to send, with defaults for what is unset. */
    TcpRepr toRepr(int defaultSourcePort, int defaultDestinationPort) {
        final boolean timestamp = tsVal != null || tsEcr != null;
        return new TcpRepr(sourcePort != null ? sourcePort : defaultSourcePort,
            destinationPort != null ? destinationPort : defaultDestinationPort, seq != null ? seq : 0,
            ack != null ? ack : 0, flags != null ? flags : 0, window != null ? window : 65535, mss != null ? mss : -1,
            windowScale != null ? windowScale : -1, sackPermitted != null && sackPermitted, timestamp,
            tsVal != null ? tsVal : 0, tsEcr != null ? tsEcr : 0, sackBlocks != null ? sackBlocks : new int[0],
            payload != null ? payload.length : 0, fastOpenCookie, fastOpenExperimental);
    }

    /** The header as the peer would send it (for tests that then break it). */
    public TcpRepr toReprForTest(int defaultSourcePort, int defaultDestinationPort) {
        return toRepr(defaultSourcePort, defaultDestinationPort);
    }

    byte[] payloadOrEmpty() {
        return payload != null ? payload : new byte[0];
    }

    @Override
    public String check(Captured frame) {
        final TcpRepr r = frame.tcp();
        final List<String> differences = new ArrayList<>();
        if (sourcePort != null && r.sourcePort() != sourcePort) {
            differences.add("source port " + r.sourcePort());
        }
        if (destinationPort != null && r.destinationPort() != destinationPort) {
            differences.add("destination port " + r.destinationPort());
        }
        if (seq != null && r.seq() != seq) {
            differences.add("seq " + Integer.toUnsignedString(r.seq()) + " (expected " + Integer.toUnsignedString(seq) + ")");
        }
        if (ack != null && r.ack() != ack) {
            differences.add("ack " + Integer.toUnsignedString(r.ack()) + " (expected " + Integer.toUnsignedString(ack) + ")");
        }
        if (flags != null && r.flags() != flags) {
            differences.add("flags " + TcpFlags.format(r.flags()) + " (expected " + TcpFlags.format(flags) + ")");
        }
        if (window != null && r.window() != window) {
            differences.add("window " + r.window() + " (expected " + window + ")");
        }
        if (mss != null && r.mss() != mss) {
            differences.add("mss " + r.mss() + " (expected " + mss + ")");
        }
        if (windowScale != null && r.windowScale() != windowScale) {
            differences.add("wscale " + r.windowScale() + " (expected " + windowScale + ")");
        }
        if (sackPermitted != null && r.sackPermitted() != sackPermitted) {
            differences.add("sackOK " + r.sackPermitted());
        }
        if (tsVal != null && (!r.timestamp() || r.tsVal() != tsVal)) {
            differences.add("TSval " + r.tsVal() + " (expected " + tsVal + ")");
        }
        if (tsEcr != null && (!r.timestamp() || r.tsEcr() != tsEcr)) {
            differences.add("TSecr " + r.tsEcr() + " (expected " + tsEcr + ")");
        }
        if (sackBlocks != null && !Arrays.equals(r.sackBlocks(), sackBlocks)) {
            differences.add("SACK " + Arrays.toString(r.sackBlocks()) + " (expected " + Arrays.toString(sackBlocks) + ")");
        }
        if (fastOpenCookie != null && (!Arrays.equals(r.fastOpenCookie(), fastOpenCookie)
            || r.fastOpenExperimental() != fastOpenExperimental)) {
            differences.add("Fast Open " + (r.fastOpenCookie() == null ? "none" : Arrays.toString(r.fastOpenCookie()))
                + " (expected " + Arrays.toString(fastOpenCookie) + ")");
        }
        if (payloadLength != null && frame.payload().length != payloadLength) {
            differences.add("payload length " + frame.payload().length + " (expected " + payloadLength + ")");
        } else if (payload != null && !Arrays.equals(frame.payload(), payload)) {
            differences.add("payload bytes differ");
        }
        if (ipEcn != null && (frame.ip().tos() & 3) != ipEcn) {
            differences.add("IP ECN field " + (frame.ip().tos() & 3) + " (expected " + ipEcn + ")");
        }
        if (!frame.checksumOk()) {
            differences.add("bad checksum");
        }
        return differences.isEmpty() ? null : String.join(", ", differences);
    }

    @Override
    public String toString() {
        final StringBuilder text = new StringBuilder("Seg{");
        if (flags != null) {
            text.append(TcpFlags.format(flags)).append(' ');
        }
        if (seq != null) {
            text.append("seq ").append(Integer.toUnsignedString(seq)).append(' ');
        }
        if (ack != null) {
            text.append("ack ").append(Integer.toUnsignedString(ack)).append(' ');
        }
        if (window != null) {
            text.append("win ").append(window).append(' ');
        }
        if (payloadLength != null) {
            text.append("len ").append(payloadLength).append(' ');
        }
        if (sackBlocks != null) {
            text.append("sack ").append(Arrays.toString(sackBlocks)).append(' ');
        }
        return text.append('}').toString();
    }
}
