package dev.tern.conformance.replay;

import dev.tern.core.checksum.InternetChecksum;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.time.VirtualClock;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.stack.testing.Frames;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PcapReplayLinkTest {
    private static final long US = 0x0200_0000_0002L;
    private static final long PEER = 0x0200_0000_0001L;
    private static final long OTHER = 0x0200_0000_0003L;
    private static final long GROUP = 0x0100_5E00_00FBL;

    private static CapturedFrame frame(long atNs, long destination, long source, int tag) {
        return new CapturedFrame(atNs, Frames.ethernet(destination, source, 0x88B5, new byte[] {(byte) tag}));
    }

    private static List<Integer> receiveTags(PcapReplayLink link) {
        final List<Integer> tags = new ArrayList<>();
        link.receive((segment, offset, length, flags) -> tags.add((int) segment.get(ValueLayout.JAVA_BYTE, offset + 14)), 64);
        return tags;
    }

    @Test
    void offersFramesForItsMacBroadcastAndJoinedGroupsWhenTheirTimeComes() {
        final VirtualClock clock = new VirtualClock(1_000);
        final List<CapturedFrame> frames = List.of(
            frame(500, US, PEER, 0),                      // before the link existed: never offered
            frame(1_000, US, PEER, 1),
            frame(2_000, MacAddress.BROADCAST, PEER, 2),
            frame(2_000, OTHER, PEER, 3),                 // for another host
            frame(2_000, GROUP, PEER, 4),                 // a group not joined (yet)
            frame(3_000, PEER, US, 5),                    // the recorded stack's own frame
            frame(4_000, GROUP, PEER, 6));
        try (PcapReplayLink link = PcapReplayLink.builder().clock(clock).mac(US).frames(frames).build()) {
            assertEquals(List.of(1), receiveTags(link));
            assertEquals(2_000, link.nextArrivalNs());
            clock.advanceTo(2_999);
            assertEquals(List.of(2), receiveTags(link));
            link.addMulticast(GROUP);
            clock.advanceTo(4_000);
            assertEquals(List.of(6), receiveTags(link));
            assertTrue(link.exhausted());
            assertEquals(Long.MAX_VALUE, link.nextArrivalNs());
            assertEquals(3, link.delivered());
            assertEquals(1, link.ownFramesSkipped());
            assertEquals(2, link.notForUsSkipped());
        }
    }

    @Test
    void framesCloseTogetherWithNoneOfTheStacksBetweenAreHandedOverInOneBatchAtTheLastOnesTime() {
        final VirtualClock clock = new VirtualClock(0);
        final List<CapturedFrame> frames = List.of(
            frame(1_000, US, PEER, 1),
            frame(1_500, US, PEER, 2),                    // within 1000 ns of the previous: same batch
            frame(2_400, US, PEER, 3),                    // and again, chained
            frame(2_500, PEER, US, 4),                    // the recorded stack answered: the batch ends
            frame(2_600, US, PEER, 5),
            frame(9_000, US, PEER, 6));                   // too long after: a batch of its own
        try (PcapReplayLink link = PcapReplayLink.builder().clock(clock).mac(US).frames(frames).batchWindowNs(1_000).build()) {
            assertEquals(2_400, link.nextArrivalNs());
            clock.advanceTo(2_399);
            assertEquals(List.of(), receiveTags(link));
            clock.advanceTo(2_400);
            assertEquals(List.of(1, 2, 3), receiveTags(link));
            assertEquals(2_500, link.nextArrivalNs(), "the recorded stack's frame is skipped at its own time");
            clock.advanceTo(2_600);
            assertEquals(List.of(5), receiveTags(link));
            clock.advanceTo(9_000);
            assertEquals(List.of(6), receiveTags(link));
        }
    }

    @Test
    void recordsWhatIsFlushedAndGetsEveryBufferBack() {
        final VirtualClock clock = new VirtualClock(7);
        try (PcapReplayLink link = PcapReplayLink.builder().clock(clock).mac(US).frames(List.of()).build()) {
            final TxFrame tx = new TxFrame();
            assertTrue(link.claim(tx));
            final byte[] bytes = frame(0, PEER, US, 9).bytes();
            MemorySegment.copy(bytes, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset(), bytes.length);
            tx.length(bytes.length);
            link.commit(tx);
            assertTrue(link.claim(tx));
            link.abort(tx);
            assertTrue(link.transmitted().isEmpty(), "nothing leaves before flush");
            assertEquals(1, link.buffersInUse());
            clock.advance(5);
            assertEquals(1, link.flush());
            assertEquals(0, link.buffersInUse());
            assertEquals(1, link.transmitted().size());
            assertEquals(12, link.transmitted().getFirst().atNs());
            assertEquals(java.util.HexFormat.of().formatHex(bytes), java.util.HexFormat.of().formatHex(link.transmitted().getFirst().bytes()));
        }
    }

    @Test
    void completesARequestedChecksumAsANicWouldAndRefusesSegmentation() {
        final VirtualClock clock = new VirtualClock();
        try (PcapReplayLink link = PcapReplayLink.builder().clock(clock).mac(US).frames(List.of())
            .offloads(Offloads.TX_L4_CHECKSUM).build()) {
            // A UDP datagram whose checksum field holds the pseudo-header sum (CHECKSUM_PARTIAL).
            final byte[] udp = new byte[8 + 11];
            final MemorySegment u = MemorySegment.ofArray(udp);
            BigEndian.u16(u, 0, 4000);
            BigEndian.u16(u, 2, 5000);
            BigEndian.u16(u, 4, udp.length);
            for (int i = 8; i < udp.length; i++) {
                udp[i] = (byte) i;
            }
            BigEndian.u16(u, 6, InternetChecksum.fold(InternetChecksum.pseudoHeader(0xC612_0002, 0xC612_0001, 17, udp.length)));
            final byte[] bytes = Frames.ethernet(PEER, US, 0x0800, Frames.ipv4(0xC612_0002, 0xC612_0001, 17, 1, 0, 64, udp));
            final TxFrame tx = new TxFrame();
            assertTrue(link.claim(tx));
            MemorySegment.copy(bytes, 0, tx.segment(), ValueLayout.JAVA_BYTE, tx.offset(), bytes.length);
            tx.length(bytes.length).requestL4Checksum(34, 6);
            link.commit(tx);
            assertTrue(link.claim(tx));
            tx.length(bytes.length).requestL4Checksum(34, 16).requestSegmentation(1000);
            link.commit(tx);
            assertEquals(1, link.flush());
            assertEquals(1, link.rejected());
            final MemorySegment sent = MemorySegment.ofArray(link.transmitted().getFirst().bytes());
            final long sum = InternetChecksum.add(InternetChecksum.pseudoHeader(0xC612_0002, 0xC612_0001, 17, udp.length),
                sent, 34, udp.length);
            assertTrue(InternetChecksum.verifies(sum), "the UDP checksum verifies after completion");
            assertFalse(BigEndian.u16(sent, 40) == 0);
        }
    }
}
