package dev.tern.script;

import dev.tern.tcp.wire.TcpFlags;
import dev.tern.tcp.wire.TcpOption;
import dev.tern.tcp.wire.TcpRepr;

import java.util.ArrayList;
import java.util.List;

/**
 * One TCP connection a script talks about, in the script's numbering: its ports (Tern's and the remote's, which
 * identify it on the wire), Tern's ISN (learned from Tern's first SYN or SYN-ACK on it; the remote's is
 * {@link ScriptRunner#REMOTE_ISN}) and the offset between the script's TS values and Tern's clock (learned from the
 * first TS option a {@code >} line matches). It compares Tern's segments with {@code >} lines, prints them in the
 * script's syntax and writes the option bytes of {@code <} lines.
 *
 * <p>Owned by one {@link ScriptRunner}.
 */
final class ScriptFlow {
    final int ternPort;
    final int remotePort;
    /** Tern's ISN, or -1 before Tern sent a SYN (numbers are then the wire's). */
    long ternIsn = -1;
    /**
     * The number the script wrote on Tern's first SYN (or SYN-ACK), 0 for most scripts. As packetdrill's (its
     * socket.h, local_seq_script_to_live_offset), a SYN's sequence number and the ACK of an injected SYN count from
     * it; every other number of Tern's counts from Tern's ISN as 0, as tcpdump's relative numbers do.
     */
    long ternScriptIsn;
    long tsOffset;
    boolean tsOffsetKnown;

    /**
     * The remote's ISN on the wire: {@link ScriptRunner#REMOTE_ISN} plus the sequence number of the first SYN the
     * script injects on the flow, as written. Packetdrill takes a SYN's number as it stands and numbers the remote's
     * other segments from it, and Tern's acknowledgments likewise (a SYN's as they stand): a script may open with
     * {@code < S. 123:123(0)} and go on at {@code 1:1(0)}.
     */
    private long remoteIsn = ScriptRunner.REMOTE_ISN;
    private boolean remoteIsnKnown;

    /**
     * The flow label a {@code >} line last named and Tern's label it then stood for (0 and 0 before a line named
     * one): packetdrill's per-socket map, since Tern picks its labels (RFC 6437 §3) and a script can only say which
     * segments share one.
     */
    private int scriptFlowLabel;
    private int ternFlowLabel;

    /** The cookie {@code TFO_COOKIE} stands for: Tern's server's for the remote (its 8 bytes, the first on top). */
    private final long fastOpenCookie;

    ScriptFlow(int ternPort, int remotePort, long fastOpenCookie) {
        this.ternPort = ternPort;
        this.remotePort = remotePort;
        this.fastOpenCookie = fastOpenCookie;
    }

    /**
     * A new connection on the flow's ports, as packetdrill's new socket under test: both sides' numbering and the
     * timestamp offset are learned again.
     */
    void restart() {
        scriptFlowLabel = 0;
        ternFlowLabel = 0;
        ternIsn = -1;
        ternScriptIsn = 0;
        tsOffsetKnown = false;
        remoteIsnKnown = false;
    }

    /**
     * Tern connects anew on the flow's ports: its numbering, the timestamp offset and its flow label are learned
     * again (the remote's numbering comes with its SYN-ACK).
     */
    void ternConnects() {
        ternIsn = -1;
        ternScriptIsn = 0;
        tsOffsetKnown = false;
        scriptFlowLabel = 0;
        ternFlowLabel = 0;
    }

    /** Whether a segment of this flow went either way since it (re)started. */
    boolean used() {
        return ternIsn >= 0 || remoteIsnKnown;
    }

    /** The script injects a SYN numbered {@code written}: the first fixes the remote's ISN. */
    void remoteSyn(long written) {
        if (!remoteIsnKnown) {
            remoteIsn = ScriptRunner.REMOTE_ISN + written;
            remoteIsnKnown = true;
        }
    }

    /**
     * What the remote's sequence numbers written on a line count from, in a segment with {@code flags}: a SYN's (and
     * the acknowledgment of a SYN Tern sends) stand as written, the others from the remote's ISN.
     */
    long remoteBase(int flags) {
        return (flags & TcpFlags.SYN) != 0 ? ScriptRunner.REMOTE_ISN : remoteIsn;
    }

    /** A Fast Open option's cookie bytes, with {@code TFO_COOKIE} resolved. */
    private byte[] cookie(ScriptLine.Option option) {
        if (option.fastOpenSymbol()) {
            final byte[] bytes = new byte[8];
            for (int i = 0; i < 8; i++) {
                bytes[i] = (byte) (fastOpenCookie >>> (56 - 8 * i));
            }
            return bytes;
        }
        final byte[] bytes = new byte[option.values().length];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) option.values()[i];
        }
        return bytes;
    }

    boolean is(int ternPort, int remotePort) {
        return this.ternPort == ternPort && this.remotePort == remotePort;
    }

    /**
     * The first way {@code actual} (a segment of this flow) differs from the line, or null; with {@code tsTickUs}
     * above 0 the TS val is compared too, within {@code toleranceNs}.
     */
    String mismatch(ScriptLine.Packet p, TcpRepr actual, long tsTickUs, long toleranceNs) {
        if (actual.flags() != p.flags()) {
            return "flags " + flags(actual.flags()) + ", not " + flags(p.flags());
        }
        final boolean syn = (actual.flags() & TcpFlags.SYN) != 0;
        if (syn && ternIsn < 0) {
            ternIsn = Integer.toUnsignedLong(actual.seq());
            ternScriptIsn = Math.max(0, p.seqStart());
        }
        if (p.ports() != null && (p.ports().source() != actual.sourcePort()
            || p.ports().destination() != actual.destinationPort())) {
            return "ports " + actual.sourcePort() + ">" + actual.destinationPort() + ", not " + p.ports();
        }
        final long seq = (relative(actual.seq(), ternIsn < 0 ? 0 : ternIsn) + (syn ? ternScriptIsn : 0)) & 0xFFFF_FFFFL;
        if (p.seqStart() != ScriptParser.ANY_SEQUENCE && seq != p.seqStart()) {
            return "sequence number " + seq + ", not " + p.seqStart();
        }
        if (actual.payloadLength() != p.payloadLength()) {
            return actual.payloadLength() + " bytes of data, not " + p.payloadLength();
        }
        if (p.ack() >= 0 && (p.flags() & TcpFlags.ACK) == 0) {
            // Without the ACK flag the field is not an acknowledgment: packetdrill compares it as on the wire.
            final long field = Integer.toUnsignedLong(actual.ack());
            if (field != p.ack()) {
                return "ack field " + field + " (no ACK flag: as on the wire), not " + p.ack();
            }
        } else if (p.ack() >= 0) {
            final long ack = relative(actual.ack(), remoteBase(actual.flags()));
            if (ack != p.ack()) {
                return "ack " + ack + ", not " + p.ack();
            }
        }
        if (p.window() >= 0 && actual.window() != p.window()) {
            return "win " + actual.window() + ", not " + p.window();
        }
        return p.options() == null ? null : optionsMismatch(p.options(), actual, tsTickUs, toleranceNs);
    }

    /**
     * Whether Tern's {@code actual} flow label fits the line's {@code written} one, as packetdrill's
     * verify_outbound_live_ipv6_flowlabel: a line without a label checks none; the first label names Tern's; the same
     * name again must be the same label, another name a label other than the last. Null when it fits.
     */
    String flowLabelMismatch(int written, int actual) {
        if (written == 0) {
            return null;
        }
        if (actual == 0) {
            return "no flow label (0), where the line has flowlabel 0x" + Integer.toHexString(written);
        }
        if (scriptFlowLabel != 0 && written == scriptFlowLabel && actual != ternFlowLabel) {
            return "flow label 0x" + Integer.toHexString(actual) + ", not the 0x" + Integer.toHexString(ternFlowLabel)
                + " that flowlabel 0x" + Integer.toHexString(written) + " stood for before";
        }
        if (scriptFlowLabel != 0 && written != scriptFlowLabel && actual == ternFlowLabel) {
            return "the same flow label 0x" + Integer.toHexString(actual) + " as before, where the line's flowlabel 0x"
                + Integer.toHexString(written) + " asks for another than flowlabel 0x"
                + Integer.toHexString(scriptFlowLabel) + "'s";
        }
        scriptFlowLabel = written;
        ternFlowLabel = actual;
        return null;
    }

    /** Tern's sequence number {@code relative} of this flow, on the wire (the ISN taken as 0 until it is known). */
    long ternSeq(long relative) {
        return ((ternIsn < 0 ? 0 : ternIsn) + relative) & 0xFFFF_FFFFL;
    }

    /** The ACK field of an injected segment with {@code flags} that acknowledges Tern's {@code relative}. */
    long ternAck(long relative, int flags) {
        return ternSeq(relative - ((flags & TcpFlags.SYN) != 0 ? ternScriptIsn : 0));
    }

    /**
     * Options are compared by meaning: each written option must be there with its values, and no other option may
     * be; order, NOP and EOL padding are not compared. TS val is not compared (it is Tern's clock) unless
     * {@code tsTickUs} says how long its tick is; the first one fixes the offset between the script's TS values and
     * Tern's, used to write the remote's TS ecr.
     */
    private String optionsMismatch(List<ScriptLine.Option> expected, TcpRepr actual, long tsTickUs,
                                   long toleranceNs) {
        boolean mss = false;
        boolean wscale = false;
        boolean sackOk = false;
        boolean ts = false;
        boolean sack = false;
        boolean fastOpen = false;
        for (ScriptLine.Option option : expected) {
            switch (option.kind()) {
                case MSS -> {
                    mss = true;
                    if (actual.mss() != option.values()[0]) {
                        return actual.mss() < 0 ? "no mss option" : "mss " + actual.mss() + ", not " + option.values()[0];
                    }
                }
                case WSCALE -> {
                    wscale = true;
                    if (actual.windowScale() != option.values()[0]) {
                        return actual.windowScale() < 0 ? "no wscale option"
                            : "wscale " + actual.windowScale() + ", not " + option.values()[0];
                    }
                }
                case SACK_OK -> {
                    sackOk = true;
                    if (!actual.sackPermitted()) {
                        return "no sackOK option";
                    }
                }
                case TIMESTAMP -> {
                    ts = true;
                    if (!actual.timestamp()) {
                        return "no TS option";
                    }
                    if (!tsOffsetKnown) {
                        tsOffset = Integer.toUnsignedLong(actual.tsVal()) - option.values()[0];
                        tsOffsetKnown = true;
                    }
                    // packetdrill's --tcp_ts_tick_usecs: the TS val, in the script's numbering, may be as many ticks
                    // off as fit the tolerance (its run_packet.c compares |actual - script| * tick).
                    final long tsVal = (Integer.toUnsignedLong(actual.tsVal()) - tsOffset) & 0xFFFF_FFFFL;
                    final long ticksOff = Math.abs((int) (tsVal - option.values()[0]));
                    if (tsTickUs > 0 && ticksOff * tsTickUs * 1_000 > toleranceNs) {
                        return "TS val " + tsVal + ", not " + option.values()[0] + " (" + ticksOff + " ticks of "
                            + tsTickUs + " µs off, beyond the tolerance of " + toleranceNs / 1_000 + " µs)";
                    }
                    if (Integer.toUnsignedLong(actual.tsEcr()) != option.values()[1]) {
                        return "TS ecr " + Integer.toUnsignedLong(actual.tsEcr()) + ", not " + option.values()[1];
                    }
                }
                case SACK -> {
                    sack = true;
                    final long[] blocks = option.values();
                    final int[] got = actual.sackBlocks();
                    final StringBuilder gotText = new StringBuilder();
                    boolean same = got.length == blocks.length;
                    for (int i = 0; i < got.length; i++) {
                        final long edge = relative(got[i], remoteBase(actual.flags()));
                        gotText.append(i % 2 == 0 ? " " : ":").append(edge);
                        same &= i < blocks.length && edge == blocks[i];
                    }
                    if (!same) {
                        return got.length == 0 ? "no SACK blocks" : "sack" + gotText + ", not " + option;
                    }
                }
                case FAST_OPEN, FAST_OPEN_EXPERIMENTAL -> {
                    fastOpen = true;
                    final boolean experimental = option.kind() == ScriptLine.Option.Kind.FAST_OPEN_EXPERIMENTAL;
                    if (actual.fastOpenCookie() == null) {
                        return "no Fast Open option";
                    }
                    if (actual.fastOpenExperimental() != experimental) {
                        return fastOpenText(actual) + ", not " + option;
                    }
                    if (!java.util.Arrays.equals(actual.fastOpenCookie(), cookie(option))) {
                        return fastOpenText(actual) + ", not " + option
                            + (option.fastOpenSymbol() ? " (" + java.util.HexFormat.of().formatHex(cookie(option))
                            + ")" : "");
                    }
                }
                case NOP, EOL -> { }
            }
        }
        if (!fastOpen && actual.fastOpenCookie() != null) {
            return "a Fast Open option the line does not have (" + fastOpenText(actual) + ")";
        }
        if (!mss && actual.mss() >= 0) {
            return "an mss option the line does not have";
        }
        if (!wscale && actual.windowScale() >= 0) {
            return "a wscale option the line does not have";
        }
        if (!sackOk && actual.sackPermitted()) {
            return "a sackOK option the line does not have";
        }
        if (!ts && actual.timestamp()) {
            return "a TS option the line does not have";
        }
        if (!sack && actual.sackBlocks().length > 0) {
            return "SACK blocks the line does not have";
        }
        return null;
    }

    /** The Fast Open option of a segment Tern sent, as a script writes it. */
    private static String fastOpenText(TcpRepr r) {
        final String kind = r.fastOpenExperimental() ? "FOEXP" : "FO";
        return r.fastOpenCookie().length == 0 ? kind
            : kind + " " + java.util.HexFormat.of().formatHex(r.fastOpenCookie());
    }

    static long relative(int wire, long isn) {
        return (Integer.toUnsignedLong(wire) - isn) & 0xFFFF_FFFFL;
    }

    static String flags(int flags) {
        final StringBuilder text = new StringBuilder();
        if ((flags & TcpFlags.SYN) != 0) {
            text.append('S');
        }
        if ((flags & TcpFlags.FIN) != 0) {
            text.append('F');
        }
        if ((flags & TcpFlags.RST) != 0) {
            text.append('R');
        }
        if ((flags & TcpFlags.PSH) != 0) {
            text.append('P');
        }
        if ((flags & TcpFlags.URG) != 0) {
            text.append('U');
        }
        if ((flags & TcpFlags.ECE) != 0) {
            text.append('E');
        }
        if ((flags & TcpFlags.CWR) != 0) {
            text.append('W');
        }
        if ((flags & TcpFlags.ACK) != 0) {
            text.append('.');
        }
        return text.toString();
    }

    /** A segment Tern sent, in the script's own syntax and numbering. */
    String describe(TcpRepr r) {
        // Before Tern's ISN is learned (a trace line printed as the SYN goes), a SYN counts from itself.
        final long isn = ternIsn >= 0 ? ternIsn
            : (r.flags() & TcpFlags.SYN) != 0 ? Integer.toUnsignedLong(r.seq()) : 0;
        final long seq = (relative(r.seq(), isn) + ((r.flags() & TcpFlags.SYN) != 0 && ternIsn >= 0 ? ternScriptIsn : 0))
            & 0xFFFF_FFFFL;
        final StringBuilder text = new StringBuilder("'").append(flags(r.flags())).append(' ').append(seq).append(':')
            .append(seq + r.payloadLength()).append('(').append(r.payloadLength()).append(')');
        if ((r.flags() & TcpFlags.ACK) != 0) {
            text.append(" ack ").append(relative(r.ack(), remoteBase(r.flags())));
        }
        text.append(" win ").append(r.window());
        // Printed with the NOPs Tern writes (Linux's layout, TcpOutput.writeOptions), so the text pastes into a script.
        final List<String> options = new ArrayList<>();
        if (r.mss() >= 0) {
            options.add("mss " + r.mss());
        }
        if (r.sackPermitted()) {
            if (!r.timestamp()) {
                options.add("nop");
                options.add("nop");
            }
            options.add("sackOK");
        }
        if (r.timestamp()) {
            if (!r.sackPermitted()) {
                options.add("nop");
                options.add("nop");
            }
            options.add("TS val " + (tsOffsetKnown ? (Integer.toUnsignedLong(r.tsVal()) - tsOffset) & 0xFFFF_FFFFL
                : Integer.toUnsignedLong(r.tsVal())) + " ecr " + Integer.toUnsignedLong(r.tsEcr()));
        }
        if (r.windowScale() >= 0) {
            options.add("nop");
            options.add("wscale " + r.windowScale());
        }
        if (r.sackBlocks().length > 0) {
            final StringBuilder blocks = new StringBuilder("sack");
            for (int i = 0; i + 1 < r.sackBlocks().length; i += 2) {
                blocks.append(' ').append(relative(r.sackBlocks()[i], remoteBase(r.flags()))).append(':')
                    .append(relative(r.sackBlocks()[i + 1], remoteBase(r.flags())));
            }
            options.add("nop");
            options.add("nop");
            options.add(blocks.toString());
        }
        if (r.fastOpenCookie() != null) {
            options.add(fastOpenText(r));
        }
        if (!options.isEmpty()) {
            text.append(" <").append(String.join(",", options)).append('>');
        }
        return text.append('\'').toString();
    }

    /** The option bytes in the order written, padded with EOL to a multiple of four. */
    byte[] optionBytes(ScriptLine.Packet p) {
        if (p.options() == null) {
            return new byte[0];
        }
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        final long isn = ternIsn < 0 ? 0 : ternIsn;
        for (ScriptLine.Option o : p.options()) {
            final long[] v = o.values();
            switch (o.kind()) {
                case NOP -> out.write(1);
                case EOL -> out.write(0);
                case MSS -> bytes(out, 2, 4, v[0] >> 8, v[0]);
                case WSCALE -> bytes(out, 3, 3, v[0]);
                case SACK_OK -> bytes(out, 4, 2);
                case TIMESTAMP -> {
                    final long ecr = v[1] == 0 || !tsOffsetKnown ? v[1] : (v[1] + tsOffset) & 0xFFFF_FFFFL;
                    bytes(out, 8, 10);
                    word(out, v[0]);
                    word(out, ecr);
                }
                case SACK -> {
                    bytes(out, 5, 2 + 4 * v.length);
                    for (long edge : v) {
                        word(out, isn + edge);
                    }
                }
                case FAST_OPEN, FAST_OPEN_EXPERIMENTAL -> {
                    final byte[] cookie = cookie(o);
                    if (o.kind() == ScriptLine.Option.Kind.FAST_OPEN) {
                        bytes(out, TcpOption.FAST_OPEN, TcpOption.FAST_OPEN_BASE_LENGTH + cookie.length);
                    } else {
                        bytes(out, TcpOption.EXPERIMENTAL, TcpOption.FAST_OPEN_EXPERIMENTAL_BASE_LENGTH + cookie.length,
                            TcpOption.FAST_OPEN_MAGIC >> 8, TcpOption.FAST_OPEN_MAGIC);
                    }
                    out.writeBytes(cookie);
                }
            }
        }
        while (out.size() % 4 != 0) {
            out.write(0);
        }
        return out.toByteArray();
    }

    private static void bytes(java.io.ByteArrayOutputStream out, long... values) {
        for (long value : values) {
            out.write((int) value & 0xFF);
        }
    }

    private static void word(java.io.ByteArrayOutputStream out, long value) {
        bytes(out, value >> 24, value >> 16, value >> 8, value);
    }
}
