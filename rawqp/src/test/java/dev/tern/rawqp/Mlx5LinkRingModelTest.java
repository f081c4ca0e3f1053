package dev.tern.rawqp;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.rawqp.mlx5.Mlx5Cqe64;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;
import dev.tern.rawqp.testing.LinkStatistics;
import dev.tern.rawqp.testing.Mlx5DeviceModel;
import dev.tern.rawqp.testing.TestFrames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The real {@link Mlx5Link} data path (SendQueue, ReceiveQueue, CompletionQueue, WQE and CQE flyweights) against
 * {@link Mlx5DeviceModel}, which plays the NIC's side of the ring protocol in the same memory.
 */
class Mlx5LinkRingModelTest {
    static final long MAC = 0x0200_0000_0001L;
    static final long PEER = 0x0200_0000_0002L;
    static final int RECEIVE = 64;
    static final int TRANSMIT = 128;
    static final int CSUM = Offloads.TX_IPV4_CHECKSUM | Offloads.TX_L4_CHECKSUM | Offloads.RX_CHECKSUM;

    /** A link on a model, with helpers to send tagged frames and collect what arrives. */
    static final class Rig implements AutoCloseable {
        final Mlx5DeviceModel device;
        final Mlx5Link link;
        final TxFrame tx = new TxFrame();
        final List<Integer> tags = new ArrayList<>();
        final List<Integer> flags = new ArrayList<>();
        final List<byte[]> frames = new ArrayList<>();
        int corrupt;
        final FrameHandler collect = (segment, offset, length, frameFlags) -> {
            if (!TestFrames.payloadIntact(segment, offset, payloadAt(segment, offset), length)) {
                corrupt++;
            }
            tags.add(TestFrames.tag(segment, offset, payloadAt(segment, offset)));
            flags.add(frameFlags);
            frames.add(segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
        };

        Rig(Mlx5DeviceModel.Config config, int bufferSize, int offloads, int moderation) {
            final FramePool pool = FramePool.allocate(config.receiveWqes() + TRANSMIT, bufferSize);
            device = new Mlx5DeviceModel(config, pool);
            link = new Mlx5Link("rawqp:model:1", MAC, 1500, offloads, pool, config.lkey(), device.rings(), moderation, config.startIndex());
            link.armReceiveQueue();
        }

        Rig(int startIndex, int moderation) {
            this(Mlx5DeviceModel.Config.small(startIndex), 2048, CSUM, moderation);
        }

        private static int payloadAt(MemorySegment segment, long offset) {
            return BigEndian.u8(segment, offset + 14 + 9) == 6 ? TestFrames.TCP_PAYLOAD : TestFrames.UDP_PAYLOAD;
        }

        /** Claims, writes and commits a UDP frame tagged {@code tag}; false if the link refused the claim. */
        boolean commit(int tag, int length) {
            if (!link.claim(tx)) {
                return false;
            }
            TestFrames.udp(tx.segment(), tx.offset(), PEER, MAC, tag, length, true);
            tx.length(length).requestIpChecksum().requestL4Checksum(34, 6);
            link.commit(tx);
            return true;
        }

        /** Commits 64-byte frames until the link refuses a claim (or 1024 went in); returns how many it took. */
        int commitUntilRefused() {
            int accepted = 0;
            while (accepted < 1024 && commit(accepted, 64)) {
                accepted++;
            }
            return accepted;
        }

        int receiveAll() {
            int total = 0;
            int n;
            while ((n = link.receive(collect, 16)) > 0) {
                total += n;
            }
            return total;
        }

        @Override
        public void close() {
            link.close();
            device.close();
        }
    }

    private Rig rig;

    @AfterEach
    void closeRig() {
        if (rig != null) {
            rig.close();
        }
    }

    @Test
    void framesLoopBackInOrderIntactWithOneDoorbellPerFlush() {
        rig = new Rig(0, 4);
        int tag = 0;
        for (int batch = 0; batch < 3; batch++) {
            for (int i = 0; i < 10; i++) {
                assertTrue(rig.commit(tag++, 60 + 97 * i));
            }
            assertEquals(10, rig.link.flush());
        }
        rig.device.run();
        assertEquals(30, rig.receiveAll());
        assertEquals(range(0, 30), rig.tags);
        assertEquals(0, rig.corrupt, "payload bytes changed on the way");
        assertEquals(3, rig.link.doorbells(), "one doorbell per flush");
        assertEquals(List.of(), rig.device.violations());
    }

    @Test
    void theDeviceSeesNoWqeBeforeTheDoorbellRecordAdvances() {
        rig = new Rig(0, 4);
        for (int i = 0; i < 5; i++) {
            assertTrue(rig.commit(i, 100));
        }
        rig.device.run();
        assertEquals(0, rig.device.wqesConsumed(), "WQEs are invisible until the doorbell");
        assertEquals(0, rig.device.sendDoorbellRecord());
        rig.link.flush();
        assertEquals(5, rig.device.sendDoorbellRecord(), "dbrec[SND] = producer index in basic blocks");
        rig.device.run();
        assertEquals(5, rig.device.wqesConsumed());
        assertEquals(List.of(), rig.device.violations());
    }

    @Test
    void theBlueFlameRegisterGetsTheLastWqesControlSegmentFirstEightBytes() {
        rig = new Rig(0, 4);
        for (int i = 0; i < 3; i++) {
            rig.commit(i, 200);
        }
        rig.link.flush();
        // The third WQE: index 2, SEND, QPN 0x1234, ds 4 (ctrl + eth with 18 inline + one data segment), no CQE asked.
        final MemorySegment expected = MemorySegment.ofArray(new byte[8]);
        BigEndian.i32(expected, 0, 2 << 8 | Mlx5SendWqe.OPCODE_SEND);
        BigEndian.i32(expected, 4, 0x1234 << 8 | 4);
        assertEquals(expected.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.nativeOrder()), 0), rig.device.blueFlameValue());
        rig.device.run();
        assertEquals(List.of(), rig.device.violations(), "the model checked the same when it caught up");
    }

    @Test
    void completionModerationAsksForOneCqePerWindowAndFreesTheWholeWindow() {
        rig = new Rig(0, 8);
        int sent = 0;
        for (int batch = 0; batch < 13; batch++) {
            for (int i = 0; i < 5; i++) {
                assertTrue(rig.commit(sent++, 80));
            }
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
        }
        rig.link.flush();
        assertEquals(65, sent);
        assertEquals(8, rig.device.sendCqes(), "65 frames, a CQE every 8th");
        assertEquals(8, rig.link.signalledWqes());
        assertEquals(RECEIVE + 1, rig.link.buffersInUse(), "receive buffers plus the one frame after the last signalled WQE");
        assertEquals(List.of(), rig.device.violations());
    }

    @ParameterizedTest(name = "counters start at {0}")
    @ValueSource(ints = {0, 0xFFF0, 0xFF_FFF0, -16})
    void indexesWrapAt16And24And32BitsAndOwnerBitsFlipEveryLap(int startIndex) {
        rig = new Rig(startIndex, 1);
        int sent = 0;
        for (int batch = 0; batch < 100; batch++) {
            for (int i = 0; i < 7; i++) {
                assertTrue(rig.commit(sent++, 60 + (sent * 37) % 1400));
            }
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
        }
        rig.link.flush();
        assertEquals(range(0, 700), rig.tags);
        assertEquals(0, rig.corrupt);
        assertTrue(rig.device.sendCqLaps() >= 10, "send CQ laps: " + rig.device.sendCqLaps());
        assertTrue(rig.device.receiveCqLaps() >= 10, "receive CQ laps: " + rig.device.receiveCqLaps());
        assertEquals(RECEIVE, rig.link.buffersInUse(), "moderation 1: every transmit buffer came back");
        assertEquals(List.of(), rig.device.violations());
    }

    @Test
    void cqesOf128BytesAreReadFromTheirSecondHalf() {
        final Mlx5DeviceModel.Config config = new Mlx5DeviceModel.Config(0x77, 0x99, 128, 64, 16, 128, 64, 128, 0, 1024);
        rig = new Rig(config, 2048, CSUM, 4);
        for (int i = 0; i < 200; i++) {
            assertTrue(rig.commit(i, 128));
            if (i % 9 == 8) {
                rig.link.flush();
                rig.device.run();
                rig.receiveAll();
            }
        }
        rig.link.flush();
        rig.device.run();
        rig.receiveAll();
        assertEquals(range(0, 200), rig.tags);
        assertEquals(List.of(), rig.device.violations());
    }

    @Test
    void aReceiveStrideWithRoomForTwoEntriesEndsEachListWithTheInvalidLkey() {
        final Mlx5DeviceModel.Config config = new Mlx5DeviceModel.Config(0x77, 0x99, 64, 64, 32, 64, 64, 64, 0, 1024);
        rig = new Rig(config, 2048, CSUM, 4);
        for (int i = 0; i < 20; i++) {
            rig.commit(i, 100);
        }
        rig.link.flush();
        rig.device.run();
        assertEquals(20, rig.receiveAll());
        assertEquals(List.of(), rig.device.violations(), "the model checks the terminator of every WQE it fills");
    }

    @Test
    void theReceiveDoorbellRecordIsWrittenOnlyWhenArmedAndThenTracksReplenishment() {
        final FramePool pool = FramePool.allocate(RECEIVE + TRANSMIT, 2048);
        try (Mlx5DeviceModel device = new Mlx5DeviceModel(Mlx5DeviceModel.Config.small(0), pool)) {
            final Mlx5Link link = new Mlx5Link("rawqp:model:1", MAC, 1500, CSUM, pool, 0x5678, device.rings(), 4, 0);
            assertEquals(0, device.receiveDoorbellRecord(), "before RTR the device must not see receive WQEs");
            link.armReceiveQueue();
            assertEquals(RECEIVE, device.receiveDoorbellRecord());
            device.inject(udpFrame(7, 300));
            device.run();
            assertEquals(1, link.receive((s, o, l, f) -> { }, 8));
            assertEquals(RECEIVE + 1, device.receiveDoorbellRecord(), "the consumed WQE went back to the device");
            link.close();
        }
    }

    @Nested
    class Offloads_ {
        @Test
        void checksumRequestsSetTheWqeFlagsAndArriveVerified() {
            rig = new Rig(0, 4);
            for (int i = 0; i < 10; i++) {
                rig.commit(i, 60 + 150 * i);
            }
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
            for (byte[] frame : rig.frames) {
                assertTrue(TestFrames.checksumsValid(MemorySegment.ofArray(frame), 0), "the model completed both checksums");
            }
            assertEquals(List.of(10), List.of(rig.flags.stream().filter(f -> f == Offloads.RX_CHECKSUM_OK).toList().size()));
        }

        @Test
        void withoutChecksumOffloadTheRequestsAreIgnoredAndNothingIsReportedVerified() {
            rig = new Rig(Mlx5DeviceModel.Config.small(0), 2048, 0, 4);
            for (int i = 0; i < 5; i++) {
                rig.commit(i, 100);
            }
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
            assertEquals(List.of(0, 0, 0, 0, 0), rig.flags);
            for (byte[] frame : rig.frames) {
                assertFalse(TestFrames.checksumsValid(MemorySegment.ofArray(frame), 0), "nobody filled in the checksums");
            }
        }

        @Test
        void aTsoFrameIsCutIntoMssSegmentsFromHeadersInlinedInTheWqe() {
            rig = new Rig(Mlx5DeviceModel.Config.small(0), 8192, CSUM | Offloads.TX_TCP_SEGMENTATION, 4);
            assertTrue(rig.link.claim(rig.tx));
            final int length = TestFrames.tcp(rig.tx.segment(), rig.tx.offset(), PEER, MAC, 42, 4000, 1_000_000, 0x18, true);
            rig.tx.length(length).requestIpChecksum().requestL4Checksum(TestFrames.TCP_HEADER_AT, 16).requestSegmentation(1448);
            rig.link.commit(rig.tx);
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
            assertEquals(List.of(), rig.device.violations());
            assertEquals(3, rig.frames.size(), "4000 bytes at MSS 1448");
            int expectedSeq = 1_000_000;
            for (int i = 0; i < 3; i++) {
                final MemorySegment segment = MemorySegment.ofArray(rig.frames.get(i));
                final int payload = i < 2 ? 1448 : 4000 - 2 * 1448;
                assertEquals(TestFrames.TCP_PAYLOAD + payload, segment.byteSize());
                assertEquals(20 + 20 + payload, BigEndian.u16(segment, 16), "IPv4 total length");
                assertEquals(expectedSeq, BigEndian.i32(segment, TestFrames.TCP_HEADER_AT + 4));
                assertEquals(i < 2 ? 0x10 : 0x18, BigEndian.u8(segment, TestFrames.TCP_HEADER_AT + 13), "PSH only on the last");
                assertTrue(TestFrames.checksumsValid(segment, 0));
                expectedSeq += payload;
            }
        }

        @Test
        void aTsoRequestWithoutTheOffloadIsSentAsOneFrame() {
            rig = new Rig(Mlx5DeviceModel.Config.small(0), 8192, CSUM, 4);
            assertTrue(rig.link.claim(rig.tx));
            final int length = TestFrames.tcp(rig.tx.segment(), rig.tx.offset(), PEER, MAC, 1, 1000, 5, 0x18, true);
            rig.tx.length(length).requestIpChecksum().requestL4Checksum(TestFrames.TCP_HEADER_AT, 16).requestSegmentation(100);
            rig.link.commit(rig.tx);
            rig.link.flush();
            rig.device.run();
            rig.receiveAll();
            assertEquals(1, rig.frames.size());
            assertEquals(List.of(), rig.device.violations());
        }
    }

    @Nested
    class Errors {
        @Test
        void aFailedSendAndTheFlushedRestAreCountedAndEveryBufferComesBack() {
            rig = new Rig(0, 4);
            rig.device.failNextSend(Mlx5Cqe64.SYNDROME_LOCAL_PROT_ERR);
            for (int i = 0; i < 10; i++) {
                rig.commit(i, 100);
            }
            rig.link.flush();
            rig.device.run();
            rig.link.flush();
            assertTrue(rig.device.inError());
            assertEquals(10, rig.device.sendErrorCqes(), "the failed WQE and 9 flushed ones");
            assertEquals(10, rig.link.txErrors());
            assertEquals(RECEIVE, rig.link.buffersInUse(), "error CQEs free transmit buffers too");
            assertEquals(0, rig.receiveAll());
        }

        @Test
        void aFrameLongerThanTheReceiveBufferIsAnErrorCqeAndTheNextFrameStillArrives() {
            rig = new Rig(0, 4);
            rig.device.inject(new byte[3000]);
            rig.device.inject(udpFrame(5, 200));
            rig.device.run();
            assertEquals(1, rig.receiveAll());
            assertEquals(List.of(5), rig.tags);
            assertEquals(1, rig.link.rxErrors());
        }

        @Test
        void framesShorterThanTheInlineMinimumAreDroppedAndTheirBuffersFreed() {
            rig = new Rig(0, 1);
            assertTrue(rig.link.claim(rig.tx));
            rig.tx.length(17);
            rig.link.commit(rig.tx);
            assertEquals(0, rig.link.flush());
            assertEquals(1, rig.link.txDropped());
            assertEquals(RECEIVE, rig.link.buffersInUse());
        }

        @Test
        void aThrowingHandlerNeitherLosesNorRepeatsFrames() {
            rig = new Rig(0, 4);
            for (int i = 0; i < 4; i++) {
                rig.commit(i, 100);
            }
            rig.link.flush();
            rig.device.run();
            final List<Integer> seen = new ArrayList<>();
            assertThrows(IllegalStateException.class, () -> rig.link.receive((s, o, l, f) -> {
                seen.add(TestFrames.tag(s, o, TestFrames.UDP_PAYLOAD));
                if (seen.size() == 2) {
                    throw new IllegalStateException("handler bug");
                }
            }, 16));
            rig.receiveAll();
            assertEquals(List.of(0, 1), seen);
            assertEquals(List.of(2, 3), rig.tags);
            assertEquals(RECEIVE + 4, rig.device.receiveDoorbellRecord(), "all four WQEs were handed back");
        }
    }

    /**
     * Held-frame receive on the ring model: a lent frame's buffer leaves the receive queue (a fresh one takes its WQE),
     * so the device never writes into it while the stack holds it, however many laps the queue makes; returned, it is
     * the slab's again.
     */
    @Nested
    class LentFrames {
        @Test
        void aLentFrameStaysIntactWhileTheDeviceFillsEveryWqeManyTimesAndComesBackOnReturn() {
            rig = new Rig(0, 4);
            rig.commit(7, 200);
            rig.link.flush();
            rig.device.run();
            final long[] lent = {-1, -1};
            final MemorySegment[] where = new MemorySegment[1];
            final long[] at = new long[1];
            assertEquals(-1, rig.link.lendFrame(MemorySegment.NULL, 0), "outside a receive call nothing is lent");
            assertEquals(1, rig.link.receive((s, o, l, f) -> {
                lent[0] = rig.link.lendFrame(s, o);
                lent[1] = rig.link.lendFrame(s, o);
                where[0] = s;
                at[0] = o;
            }, 16));
            assertTrue(lent[0] >= 0, "lent");
            assertEquals(-1, lent[1], "a frame is lent once");
            // Several laps of the receive queue, every WQE filled again.
            for (int lap = 0; lap < 4 * RECEIVE; lap += 8) {
                for (int i = 0; i < 8; i++) {
                    assertTrue(rig.commit(1000 + lap + i, 300));
                }
                rig.link.flush();
                rig.device.run();
                rig.receiveAll();
            }
            assertEquals(7, TestFrames.tag(where[0], at[0], TestFrames.UDP_PAYLOAD), "the lent frame untouched");
            assertEquals(0, rig.corrupt);
            assertEquals(List.of(), rig.device.violations());
            final int inUse = rig.link.buffersInUse();
            rig.link.returnFrame((int) lent[0]);
            assertEquals(inUse - 1, rig.link.buffersInUse(), "back to the slab");
        }

        @Test
        void theLinkLendsAQuarterOfItsReceiveQueueAtOnce() {
            rig = new Rig(0, 4);
            final List<Integer> leases = new ArrayList<>();
            for (int round = 0; round < 4; round++) {
                for (int i = 0; i < RECEIVE / 2; i++) {
                    assertTrue(rig.commit(i, 100));
                }
                rig.link.flush();
                rig.device.run();
                rig.link.receive((s, o, l, f) -> {
                    final int lease = rig.link.lendFrame(s, o);
                    if (lease >= 0) {
                        leases.add(lease);
                    }
                }, RECEIVE);
            }
            assertEquals(RECEIVE / 4, leases.size());
            assertEquals(List.of(), rig.device.violations());
            final int inUse = rig.link.buffersInUse();
            leases.forEach(rig.link::returnFrame);
            assertEquals(inUse - RECEIVE / 4, rig.link.buffersInUse(), "every lent buffer back");
        }
    }

    @Nested
    class Statistics {
        @Test
        void theCommonStatisticsComeFirstThenDoorbellsAndSignalledWqes() {
            rig = new Rig(0, 4);
            assertEquals(List.of("rx.frames", "rx.bytes", "rx.errors", "rx.dropped", "tx.frames", "tx.dropped", "tx.errors", "tx.busy",
                "buffers_in_use", "tx.doorbells", "tx.signalled_wqes"), List.of(rig.link.statisticNames()));
            final Map<String, Long> fresh = LinkStatistics.read(rig.link);
            assertEquals((long) RECEIVE, fresh.get("buffers_in_use"), "the receive buffers");
            fresh.remove("buffers_in_use");
            assertEquals(List.of(0L), fresh.values().stream().distinct().toList(), "nothing counted yet: " + fresh);
        }

        @Test
        void framesSentAndReceivedMoveTheFrameByteDoorbellAndSignalCounters() {
            rig = new Rig(0, 4);
            long bytes = 0;
            for (int i = 0; i < 10; i++) {
                assertTrue(rig.commit(i, 100 + i));
                bytes += 100 + i;
            }
            rig.link.flush();
            for (int i = 10; i < 13; i++) {
                assertTrue(rig.commit(i, 200));
                bytes += 200;
            }
            rig.link.flush();
            rig.device.run();
            assertEquals(13, rig.receiveAll());
            rig.link.flush();
            final Map<String, Long> stats = LinkStatistics.read(rig.link);
            assertEquals(13L, stats.get("rx.frames"));
            assertEquals(bytes, stats.get("rx.bytes"));
            assertEquals(13L, stats.get("tx.frames"));
            assertEquals(2L, stats.get("tx.doorbells"), "one per flush with frames");
            assertEquals(3L, stats.get("tx.signalled_wqes"), "every 4th of 13 WQEs");
            assertEquals(RECEIVE + 1L, stats.get("buffers_in_use"), "the 13th frame waits for a signalled completion");
            assertEquals(0L, stats.get("rx.errors") + stats.get("rx.dropped") + stats.get("tx.dropped") + stats.get("tx.errors")
                + stats.get("tx.busy"));
        }

        @Test
        void receiveErrorsAndImpossibleLengthsAreCountedApart() {
            rig = new Rig(0, 4);
            rig.device.inject(new byte[3000]);
            rig.device.inject(new byte[10]);
            rig.device.inject(new byte[2500]);
            rig.device.inject(udpFrame(1, 80));
            rig.device.run();
            assertEquals(1, rig.receiveAll());
            final Map<String, Long> stats = LinkStatistics.read(rig.link);
            assertEquals(2L, stats.get("rx.errors"), "longer than the buffer: an error CQE");
            assertEquals(1L, stats.get("rx.dropped"), "10 bytes cannot be an Ethernet frame");
            assertEquals(1L, stats.get("rx.frames"));
            assertEquals(80L, stats.get("rx.bytes"));
        }

        @Test
        void refusedClaimsDroppedFramesAndSendErrorsAreCountedApart() {
            rig = new Rig(0, 4);
            assertEquals(64, rig.commitUntilRefused());
            assertEquals(1L, LinkStatistics.read(rig.link).get("tx.busy"), "the 65th claim found the send queue full");
            rig.link.flush();
            rig.device.run();
            rig.link.flush();
            for (int i = 0; i < 2; i++) {
                assertTrue(rig.link.claim(rig.tx));
                rig.tx.length(17);
                rig.link.commit(rig.tx);
            }
            rig.device.failNextSend(Mlx5Cqe64.SYNDROME_LOCAL_PROT_ERR);
            for (int i = 0; i < 3; i++) {
                assertTrue(rig.commit(100 + i, 100));
            }
            rig.link.flush();
            rig.device.run();
            rig.link.flush();
            final Map<String, Long> stats = LinkStatistics.read(rig.link);
            assertEquals(1L, stats.get("tx.busy"));
            assertEquals(2L, stats.get("tx.dropped"), "shorter than the inline minimum");
            assertEquals(3L, stats.get("tx.errors"), "the failed WQE and the two flushed after it");
            assertEquals(64L + 3, stats.get("tx.frames"), "frames handed to the device, failed ones included");
            assertEquals((long) RECEIVE, stats.get("buffers_in_use"));
        }
    }

    @Test
    void claimSaysNoWhenTheSendQueueIsFullAndYesAgainAfterCompletions() {
        rig = new Rig(0, 4);
        assertEquals(64, rig.commitUntilRefused(), "a 64-block send queue holds 64 one-block WQEs");
        assertEquals(1, rig.link.txBusy());
        rig.link.flush();
        rig.device.run();
        rig.link.flush();
        assertTrue(rig.commit(999, 64), "completions made room");
    }

    static byte[] udpFrame(int tag, int length) {
        final MemorySegment frame = MemorySegment.ofArray(new byte[length]);
        TestFrames.udp(frame, 0, MAC, PEER, tag, length, false);
        return frame.toArray(ValueLayout.JAVA_BYTE);
    }

    static List<Integer> range(int from, int to) {
        final List<Integer> values = new ArrayList<>();
        for (int i = from; i < to; i++) {
            values.add(i);
        }
        return values;
    }
}
