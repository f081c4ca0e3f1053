package dev.tern.afpacket;

import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The receive and transmit paths allocate nothing per frame: Tern's link and a second link on the peer's end send
 * numbered frames to each other over the veth, one thread driving both (claim, write, commit, flush, receive).
 *
 * <p>The house rule's ≥1M frames holds: 1M frames each way (2M sent, 2M received) after 150k of warm-up take about
 * 2 s over veth on the 2-core build machine. The first 50k warm-up
 * frames go in bursts of two: before C2 compiles it, the FFM downcall path allocates about 32 bytes per call, and the
 * small bursts make enough {@code sendto} downcalls for C2 to compile (and scalar-replace) it; the rest warms the
 * loop with the measured burst size.
 */
class AfPacketZeroAllocationTest {
    private static final int WARMUP_FRAMES = 150_000;
    private static final int SMALL_BURST_WARMUP_FRAMES = 50_000;
    private static final int MEASURED_FRAMES = 1_000_000;
    private static final int FRAME_LENGTH = 64;
    private static final int BURST = 64;
    /** Warm-up flushes every other frame, so the flush path (one downcall per burst) is called often enough to be compiled by C2. */
    private static final int WARMUP_BURST = 2;
    /** Frames in flight per direction: well inside the receive ring, so the kernel never has to drop. */
    private static final int WINDOW = 4096;
    private static final long TIME_LIMIT_NS = 60_000_000_000L;

    /** One direction: numbered frames out of {@code from}, counted and checked on {@code to}. */
    private static final class Direction implements FrameHandler {
        private final AfPacketLink from;
        private final AfPacketLink to;
        private final TxFrame tx = new TxFrame();
        long sent;
        long received;
        long outOfOrder;

        Direction(AfPacketLink from, AfPacketLink to) {
            this.from = from;
            this.to = to;
        }

        void transmit(long target, int maxBurst) {
            int burst = 0;
            while (sent < target && sent - received < WINDOW && burst < maxBurst && from.claim(tx)) {
                final MemorySegment s = tx.segment();
                final long o = tx.offset();
                BigEndian.u48(s, o, to.macAddress());
                BigEndian.u48(s, o + 6, from.macAddress());
                BigEndian.u16(s, o + 12, Packets.ETHERTYPE_EXPERIMENT);
                BigEndian.i64(s, o + 14, sent);
                tx.length(FRAME_LENGTH);
                from.commit(tx);
                sent++;
                burst++;
            }
            from.flush();
        }

        void receive() {
            to.receive(this, 256);
        }

        @Override
        public void onFrame(MemorySegment segment, long offset, int length, int flags) {
            if (BigEndian.u16(segment, offset + 12) != Packets.ETHERTYPE_EXPERIMENT) {
                return;
            }
            if (BigEndian.i64(segment, offset + 14) != received || length != FRAME_LENGTH) {
                outOfOrder++;
            }
            received++;
        }
    }

    private static void run(Direction there, Direction back, long target, int burst) {
        final long deadline = System.nanoTime() + TIME_LIMIT_NS;
        while (there.received < target || back.received < target) {
            there.transmit(target, burst);
            back.transmit(target, burst);
            there.receive();
            back.receive();
            if (deadline - System.nanoTime() < 0) {
                throw new AssertionError("stalled: there " + there.sent + "/" + there.received + ", back " + back.sent + "/" + back.received);
            }
        }
    }

    @Test
    void receiveAndTransmitAllocateNothingPerFrame() {
        try (NetnsHarness net = NetnsTesting.harness();
             AfPacketLink tern = net.openTernLink(AfPacketLink::open, AfPacketOptions.defaults());
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, AfPacketOptions.defaults())) {
            final Direction there = new Direction(tern, peer);
            final Direction back = new Direction(peer, tern);
            run(there, back, SMALL_BURST_WARMUP_FRAMES, WARMUP_BURST);
            run(there, back, WARMUP_FRAMES, BURST);

            // A one-off (a deoptimisation under a busy machine, seen once in CI at 136 bytes) settles within a few
            // windows after the warm-up: up to three, until one allocates nothing. Then one more is measured whole
            // on every stack thread, and a per-frame allocation shows in it.
            long settling = -1;
            long target = WARMUP_FRAMES;
            for (int window = 0; window < 3 && settling != 0; window++) {
                target += MEASURED_FRAMES;
                final Allocations.Window w = Allocations.open();
                run(there, back, target, BURST);
                settling = w.close();
            }
            // The measured window: a one-off in it is run again (Allocations.recurringAllocation says why).
            final long[] measuredTarget = {target};
            final String perFrame = Allocations.recurringAllocation(2 * MEASURED_FRAMES, () -> {
                measuredTarget[0] += MEASURED_FRAMES;
                run(there, back, measuredTarget[0], BURST);
            });
            target = measuredTarget[0];

            assertNull(perFrame, "frames sent and received allocate: " + perFrame);
            assertEquals(0, there.outOfOrder + back.outOfOrder, "every frame arrived, in order");
            assertEquals(target, tern.stats().txFrames());
            assertEquals(target, tern.stats().rxFrames());
            assertEquals(0, tern.stats().kernelDrops() + peer.stats().kernelDrops());
        }
    }
}
