package dev.tern.conformance.replay;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.ipv4.Ipv4Config;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The comparison catches what it should (content, order, timing, inconsistent identifications) and no more. */
class FrameComparisonTest {
    private static final long A = 0x0200_0000_000AL;
    private static final long B = 0x0200_0000_000BL;
    private static final int IP_A = 0xC612_000A;
    private static final int IP_B = 0xC612_000B;

    private static CapturedFrame datagram(long atNs, int identification) {
        return new CapturedFrame(atNs, Frames.ethernet(B, A, 0x0800,
            Frames.ipv4(IP_A, IP_B, 253, identification, 0, 64, Frames.pattern(40, 1))));
    }

    @Test
    void identicalFramesMatch() {
        final List<CapturedFrame> frames = List.of(datagram(10, 1), datagram(20, 2));
        final FrameComparison comparison = FrameComparison.of(frames, 0, frames, 0);
        assertTrue(comparison.matches(), comparison.report());
        assertEquals("identical (2 frames)", comparison.report());
    }

    @Test
    void identificationsMayBeRenamedConsistentlyButNeverMerged() {
        final List<CapturedFrame> recorded = List.of(datagram(0, 1), datagram(0, 2), datagram(0, 1));
        assertTrue(FrameComparison.of(recorded, 0, List.of(datagram(0, 7), datagram(0, 8), datagram(0, 7)), 0).matches());
        final FrameComparison merged = FrameComparison.of(recorded, 0, List.of(datagram(0, 7), datagram(0, 7), datagram(0, 7)), 0);
        assertFalse(merged.matches());
        assertTrue(merged.report().contains("not a consistent renaming"), merged.report());
        final FrameComparison split = FrameComparison.of(recorded, 0, List.of(datagram(0, 7), datagram(0, 8), datagram(0, 9)), 0);
        assertFalse(split.matches(), split.report());
    }

    @Test
    void aBadHeaderChecksumIsCaughtThoughTheChecksumFieldIsMasked() {
        final CapturedFrame good = datagram(0, 1);
        final byte[] bad = good.bytes().clone();
        bad[14 + 10] ^= 0x01;
        final FrameComparison comparison = FrameComparison.of(List.of(good), 0, List.of(new CapturedFrame(0, bad)), 0);
        assertEquals(List.of("frame 1 of the stack's: bad IPv4 header checksum"), comparison.differences());
    }

    @Test
    void aFrameLateByMoreThanTheToleranceIsReported() {
        final FrameComparison comparison = FrameComparison.of(List.of(datagram(1_000, 1)), 1_000,
            List.of(datagram(500_000_000L, 1)), 0);
        assertEquals(List.of("frame 1 of the stack's: sent at +500.000 ms, recorded at +0.000 ms"), comparison.differences());
    }

    @Test
    void aStackWithAnotherTtlDiffersInTheTtlOfEveryDatagram() {
        final Capture capture = Pcaps.read("arp-icmp-kernel-pings-tern.pcap");
        final Ipv4Config ttl63 = new Ipv4Config(63, 64, 30_000_000_000L, 128, 1000, 50, 256, 600_000_000_000L, 552, true);
        try (Replay replay = Replay.of(capture, ReplayScript.read(ReplayScript.besides(capture.path())),
            builder -> builder.ipv4(ttl63)).run()) {
            final FrameComparison comparison = replay.compare();
            assertFalse(comparison.matches());
            assertTrue(comparison.report().contains("byte 22 is 0x3f, recorded 0x40 (IPv4 header byte 8)"), comparison.report());
        }
    }

    @Test
    void aReassemblyTimerFiringEarlyIsCaught() {
        final Capture capture = Pcaps.read("ipv4-reassembly-timeout.pcap");
        try (Replay replay = Replay.of(capture, ReplayScript.read(ReplayScript.besides(capture.path())),
            builder -> builder.ipv4(Ipv4Config.DEFAULT.withReassemblyTimeoutNs(20_000_000_000L))).run()) {
            final FrameComparison comparison = replay.compare();
            assertFalse(comparison.matches());
            assertTrue(comparison.report().contains("sent at +20"), comparison.report());
        }
    }

    /** A TCP segment with a timestamp option (NOP, NOP, TS) carrying {@code tsVal}, checksum correct unless told. */
    private static CapturedFrame segment(long atNs, int tsVal, boolean goodChecksum) {
        final byte[] tcp = new byte[32 + 10];
        final MemorySegment s = MemorySegment.ofArray(tcp);
        BigEndian.u16(s, 0, 40000);
        BigEndian.u16(s, 2, 5001);
        BigEndian.i32(s, 4, 1000);
        BigEndian.i32(s, 8, 2000);
        BigEndian.u8(s, 12, 8 << 4);
        BigEndian.u8(s, 13, 0x18);
        BigEndian.u16(s, 14, 512);
        tcp[20] = 1;
        tcp[21] = 1;
        tcp[22] = 8;
        tcp[23] = 10;
        BigEndian.i32(s, 24, tsVal);
        BigEndian.i32(s, 28, 77);
        final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(IP_A, IP_B, 6, tcp.length), s, 0, tcp.length);
        BigEndian.u16(s, 16, InternetChecksum.finish(sum) ^ (goodChecksum ? 0 : 1));
        return new CapturedFrame(atNs, Frames.ethernet(B, A, 0x0800, Frames.ipv4(IP_A, IP_B, 6, 1, 0x4000, 64, tcp)));
    }

    @Test
    void aTcpTimestampMayReadTheClockALittleDifferentlyButTheChecksumMustVerify() {
        final List<CapturedFrame> recorded = List.of(segment(0, 1_000_000, true));
        assertTrue(FrameComparison.of(recorded, 0, List.of(segment(0, 999_997, true)), 0).matches(), "3 ms earlier");
        assertEquals(List.of("frame 1 of the stack's: TCP TSval 1000200, recorded 1000000 (more than the time tolerance apart)"),
            FrameComparison.of(recorded, 0, List.of(segment(0, 1_000_200, true)), 0).differences());
        assertEquals(List.of("frame 1 of the stack's: bad TCP checksum"),
            FrameComparison.of(recorded, 0, List.of(segment(0, 999_999, false)), 0).differences());
        assertEquals(14 + 20 + 20 + 4, FrameComparison.tcpTimestampValueOffset(recorded.getFirst()),
            "Ethernet, IPv4, TCP headers, then NOP, NOP, kind and length");
    }

    @Test
    void aMissingFrameIsReported() {
        final Capture capture = Pcaps.read("icmp-protocol-unreachable.pcap");
        try (Replay replay = Replay.of(capture).run()) {
            final List<CapturedFrame> recorded = replay.recorded();
            final FrameComparison comparison = FrameComparison.of(recorded.subList(0, recorded.size() - 1),
                replay.script().start().atNs(), replay.transmitted(), replay.script().start().atNs());
            assertTrue(comparison.report().startsWith("the capture has " + (recorded.size() - 1)
                + " frames from the stack, the replay sent " + recorded.size()), comparison.report());
        }
    }
}
