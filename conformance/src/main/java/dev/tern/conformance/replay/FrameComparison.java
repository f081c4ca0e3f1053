package dev.tern.conformance.replay;

import dev.tern.core.checksum.InternetChecksum;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the frames a stack sent in a replay differ from the frames a capture recorded it sending: frame by frame, in
 * order, byte for byte, except for fields that may legitimately differ between two runs of a correct stack.
 *
 * <p>Fields allowed to differ, and why:
 * <ul>
 *   <li><b>IPv4 identification</b> (and, with it, the IPv4 header checksum): RFC 6864 §4.1 lets a source choose
 *       the identification of a datagram freely, as long as it is unique for (source, destination, protocol) while
 *       fragments may be in flight. Stacks legitimately use a global counter, per-destination counters or random
 *       values (Linux), so a recorded value is not an answer we can demand. What we do demand instead: the replayed
 *       values are a <em>consistent renaming</em> of the recorded ones (fragments of one datagram share one value,
 *       different datagrams get different values), and every replayed IPv4 header checksum is valid.</li>
 *   <li><b>TCP timestamp value</b> (TSval, RFC 7323), and with it the TCP checksum: TSval is a reading of the
 *       sender's millisecond clock (plus a per-connection offset, which a replay with the recording's TCP key
 *       reproduces). A replay answers at the kernel's capture timestamps, a little before the recorded stack saw
 *       the frames, so its clock may read a few milliseconds earlier. What we demand: each replayed TSval within the
 *       time tolerance of the recorded one (both are milliseconds), and every replayed TCP checksum valid. TSecr,
 *       the kernel's value echoed, must be identical.</li>
 * </ul>
 * Everything else (MACs, lengths, TTL, flags and offsets, addresses, ICMP type, code, identifier, sequence,
 * checksum and data, IGMP records, UDP ports, checksum and data, TCP ports, sequence and acknowledgment numbers,
 * flags, window, options and data, ARP fields, Ethernet padding) must be identical, and in the same order.
 *
 * <p>Time: each frame must leave within {@link #DEFAULT_TOLERANCE_NS} (100 ms) of when it was recorded, counted from
 * the start of each run, so a timer that fires at the wrong time (an announcement, a reassembly timeout) is caught.
 * The tolerance covers the recorded stack's real-time delays (its AF_PACKET ring hands frames over within a
 * millisecond or two; a replay on virtual time answers at once).
 */
public final class FrameComparison {
    private static final int ETHERNET_HEADER = 14;
    private static final int IPV4_IDENTIFICATION = ETHERNET_HEADER + 4;
    private static final int IPV4_CHECKSUM = ETHERNET_HEADER + 10;
    private static final int MAX_REPORTED = 20;
    public static final long DEFAULT_TOLERANCE_NS = 100_000_000L;

    private final List<CapturedFrame> expected;
    private final List<CapturedFrame> actual;
    private final long expectedStartNs;
    private final long actualStartNs;
    private final long toleranceNs;
    private final List<String> differences = new ArrayList<>();

    private FrameComparison(List<CapturedFrame> expected, long expectedStartNs, List<CapturedFrame> actual,
                            long actualStartNs, long toleranceNs) {
        this.expected = expected;
        this.actual = actual;
        this.expectedStartNs = expectedStartNs;
        this.actualStartNs = actualStartNs;
        this.toleranceNs = toleranceNs;
        compare();
    }

    /**
     * Compares {@code actual} (what the stack sent, timed from {@code actualStartNs}) with {@code expected} (what the
     * capture recorded, timed from {@code expectedStartNs}), with the default time tolerance.
     */
    public static FrameComparison of(List<CapturedFrame> expected, long expectedStartNs, List<CapturedFrame> actual,
                                     long actualStartNs) {
        return of(expected, expectedStartNs, actual, actualStartNs, DEFAULT_TOLERANCE_NS);
    }

    /** As {@link #of(List, long, List, long)}; {@code toleranceNs} {@link Long#MAX_VALUE} ignores time. */
    public static FrameComparison of(List<CapturedFrame> expected, long expectedStartNs, List<CapturedFrame> actual,
                                     long actualStartNs, long toleranceNs) {
        return new FrameComparison(List.copyOf(expected), expectedStartNs, List.copyOf(actual), actualStartNs, toleranceNs);
    }

    private void compare() {
        if (expected.size() != actual.size()) {
            differences.add("the capture has " + expected.size() + " frames from the stack, the replay sent " + actual.size());
        }
        final Map<Integer, Integer> renaming = new HashMap<>();
        final Map<Integer, Integer> reverse = new HashMap<>();
        for (int i = 0; i < Math.min(expected.size(), actual.size()); i++) {
            final byte[] want = expected.get(i).bytes();
            final byte[] got = actual.get(i).bytes();
            final String where = "frame " + (i + 1) + " of the stack's";
            final long recordedAt = expected.get(i).timestampNs() - expectedStartNs;
            final long sentAt = actual.get(i).timestampNs() - actualStartNs;
            if (toleranceNs != Long.MAX_VALUE && Math.abs(sentAt - recordedAt) > toleranceNs) {
                differences.add(where + ": sent at +" + millis(sentAt) + " ms, recorded at +" + millis(recordedAt) + " ms");
            }
            if (want.length != got.length) {
                differences.add(where + ": " + got.length + " bytes, recorded " + want.length);
                continue;
            }
            final boolean ipv4 = expected.get(i).isIpv4() && actual.get(i).isIpv4();
            final int tsVal = ipv4 ? tcpTimestampValueOffset(expected.get(i)) : -1;
            final int tcpChecksum = tsVal >= 0 ? ETHERNET_HEADER + (want[ETHERNET_HEADER] & 0x0F) * 4 + 16 : -1;
            if (tsVal >= 0 && tcpTimestampValueOffset(actual.get(i)) == tsVal) {
                final long skewMs = (long) actual.get(i).i32(tsVal) - expected.get(i).i32(tsVal);
                if (toleranceNs != Long.MAX_VALUE && Math.abs((int) skewMs) * 1_000_000L > toleranceNs) {
                    differences.add(where + ": TCP TSval " + Integer.toUnsignedString(actual.get(i).i32(tsVal)) + ", recorded "
                        + Integer.toUnsignedString(expected.get(i).i32(tsVal)) + " (more than the time tolerance apart)");
                }
                if (!tcpChecksumVerifies(actual.get(i))) {
                    differences.add(where + ": bad TCP checksum");
                }
            }
            for (int b = 0; b < want.length; b++) {
                final boolean tcpMasked = tsVal >= 0 && (b >= tsVal && b < tsVal + 4 || b == tcpChecksum || b == tcpChecksum + 1);
                if (want[b] != got[b] && !(ipv4 && masked(b)) && !tcpMasked) {
                    differences.add(where + ": byte " + b + " is 0x" + hex(got[b]) + ", recorded 0x" + hex(want[b])
                        + " (" + describe(expected.get(i), b) + ")");
                    break;
                }
            }
            if (ipv4) {
                final int headerLength = (got[ETHERNET_HEADER] & 0x0F) * 4;
                if (!InternetChecksum.verifies(InternetChecksum.add(0, MemorySegment.ofArray(got), ETHERNET_HEADER, headerLength))) {
                    differences.add(where + ": bad IPv4 header checksum");
                }
                final int recordedId = expected.get(i).u16(IPV4_IDENTIFICATION);
                final int replayedId = actual.get(i).u16(IPV4_IDENTIFICATION);
                final Integer before = renaming.putIfAbsent(recordedId, replayedId);
                final Integer reverseBefore = reverse.putIfAbsent(replayedId, recordedId);
                if ((before != null && before != replayedId) || (reverseBefore != null && reverseBefore != recordedId)) {
                    differences.add(where + ": IPv4 identification " + replayedId + " is not a consistent renaming of the "
                        + "recorded " + recordedId + " (one datagram's fragments must share a value, different datagrams differ)");
                }
            }
        }
    }

    /**
     * Where the TSval of the TCP timestamp option (kind 8, length 10) starts in {@code frame}, or -1 when the frame is
     * not a TCP segment with one. Options are walked as RFC 9293 §3.2 lays them out; a malformed list ends the walk.
     */
    static int tcpTimestampValueOffset(CapturedFrame frame) {
        if (frame.ipProtocol() != 6 || frame.isLaterFragment()) {
            return -1;
        }
        final int tcp = ETHERNET_HEADER + (frame.u8(ETHERNET_HEADER) & 0x0F) * 4;
        if (tcp + 20 > frame.length()) {
            return -1;
        }
        final int end = Math.min(frame.length(), tcp + (frame.u8(tcp + 12) >>> 4) * 4);
        int at = tcp + 20;
        while (at < end) {
            final int kind = frame.u8(at);
            if (kind == 0) {
                return -1;
            }
            if (kind == 1) {
                at++;
                continue;
            }
            if (at + 1 >= end || frame.u8(at + 1) < 2) {
                return -1;
            }
            if (kind == 8 && frame.u8(at + 1) == 10 && at + 10 <= end) {
                return at + 2;
            }
            at += frame.u8(at + 1);
        }
        return -1;
    }

    private static boolean tcpChecksumVerifies(CapturedFrame frame) {
        final int headerLength = (frame.u8(ETHERNET_HEADER) & 0x0F) * 4;
        final int length = frame.u16(ETHERNET_HEADER + 2) - headerLength;
        final long sum = InternetChecksum.pseudoHeader(frame.i32(ETHERNET_HEADER + 12), frame.i32(ETHERNET_HEADER + 16), 6, length);
        return InternetChecksum.verifies(InternetChecksum.add(sum, MemorySegment.ofArray(frame.bytes()),
            ETHERNET_HEADER + headerLength, length));
    }

    private static boolean masked(int offset) {
        return offset == IPV4_IDENTIFICATION || offset == IPV4_IDENTIFICATION + 1
            || offset == IPV4_CHECKSUM || offset == IPV4_CHECKSUM + 1;
    }

    /** Names the field at {@code offset} of a frame, roughly, for the report. */
    static String describe(CapturedFrame frame, int offset) {
        if (offset < 6) {
            return "Ethernet destination";
        }
        if (offset < 12) {
            return "Ethernet source";
        }
        if (offset < ETHERNET_HEADER) {
            return "EtherType";
        }
        if (frame.isArp()) {
            return "ARP byte " + (offset - ETHERNET_HEADER);
        }
        if (frame.isIpv4()) {
            final int headerLength = (frame.u8(ETHERNET_HEADER) & 0x0F) * 4;
            final int totalLength = frame.u16(ETHERNET_HEADER + 2);
            if (offset < ETHERNET_HEADER + headerLength) {
                return "IPv4 header byte " + (offset - ETHERNET_HEADER);
            }
            if (offset >= ETHERNET_HEADER + totalLength) {
                return "Ethernet padding";
            }
            final String transport = frame.isLaterFragment() ? "IPv4 payload" : switch (frame.ipProtocol()) {
                case 1 -> "ICMP";
                case 2 -> "IGMP";
                case 6 -> "TCP";
                case 17 -> "UDP";
                default -> "IPv4 payload";
            };
            return transport + " byte " + (offset - ETHERNET_HEADER - headerLength);
        }
        return "payload byte " + (offset - ETHERNET_HEADER);
    }

    private static String millis(long ns) {
        return String.format("%.3f", ns / 1e6);
    }

    private static String hex(byte value) {
        return String.format("%02x", value & 0xFF);
    }

    public boolean matches() {
        return differences.isEmpty();
    }

    public List<String> differences() {
        return differences;
    }

    /** The differences, at most 20, one per line, or "identical". */
    public String report() {
        if (differences.isEmpty()) {
            return "identical (" + actual.size() + " frames)";
        }
        final StringBuilder text = new StringBuilder();
        differences.stream().limit(MAX_REPORTED).forEach(d -> text.append(d).append('\n'));
        if (differences.size() > MAX_REPORTED) {
            text.append("... and ").append(differences.size() - MAX_REPORTED).append(" more\n");
        }
        return text.toString();
    }

    @Override
    public String toString() {
        return report();
    }
}
