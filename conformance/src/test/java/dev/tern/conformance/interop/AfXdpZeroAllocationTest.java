package dev.tern.conformance.interop;

import dev.tern.afpacket.AfPacketLink;
import dev.tern.afpacket.AfPacketOptions;
import dev.tern.afxdp.AfXdpLink;
import dev.tern.afxdp.AfXdpOptions;
import dev.tern.core.memory.BigEndian;
import dev.tern.core.testing.Allocations;
import dev.tern.ethernet.link.FrameHandler;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.testkit.netns.NetnsHarness;
import dev.tern.testkit.netns.NetnsTesting;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The AF_XDP link's receive and transmit paths allocate nothing per frame: Tern's {@link AfXdpLink} and an AF_PACKET
 * link on the peer's end send numbered frames to each other over the veth, one thread driving both.
 *
 * <p>Frames towards Tern are IPv4 frames for Tern's MAC and address, so that the steering program redirects them to
 * the socket; frames from Tern carry an experimental ethertype the peer's kernel ignores. 1M frames each way are
 * measured after 150k of warm-up (the first 50k in bursts of two, so that C2 compiles the downcall paths, as in
 * afpacket's test). Twice: 64-byte frames at MTU 1500 (one descriptor each), and 2,100-byte frames at MTU 9000, each
 * a multi-buffer frame both ways (two receive descriptors of at most 1,792 bytes gathered into one buffer, two
 * transmit descriptors chained with XDP_PKT_CONTD), the shortest frame that takes both multi-buffer paths.
 */
class AfXdpZeroAllocationTest {
    private static final int WARMUP_FRAMES = 150_000;
    private static final int SMALL_BURST_WARMUP_FRAMES = 50_000;
    private static final int MEASURED_FRAMES = 1_000_000;
    private static final int BURST = 64;
    private static final int WARMUP_BURST = 2;

    /**
     * One run: the veth's MTU, the frames' length, and the frames in flight per direction (descriptors in flight
     * stay within the AF_XDP RX ring's 2048, so the kernel never drops).
     */
    record Case(int mtu, int frameLength, int window) {
        @Override
        public String toString() {
            return frameLength + "-byte frames at MTU " + mtu;
        }
    }

    static java.util.stream.Stream<Case> cases() {
        return java.util.stream.Stream.of(new Case(1500, 64, 1024), new Case(9000, 2100, 512));
    }
    private static final int ETHERTYPE_IPV4 = 0x0800;
    private static final int ETHERTYPE_EXPERIMENT = 0x88B5;
    private static final int SEQUENCE_OFFSET = 34;
    private static final long TIME_LIMIT_NS = 120_000_000_000L;

    private static final class Direction implements FrameHandler {
        private final Link from;
        private final Link to;
        private final int ethertype;
        private final TxFrame tx = new TxFrame();
        private final int frameLength;
        private final int window;
        long sent;
        long received;
        long outOfOrder;

        Direction(Link from, Link to, int ethertype, Case run) {
            this.from = from;
            this.to = to;
            this.ethertype = ethertype;
            this.frameLength = run.frameLength();
            this.window = run.window();
        }

        void transmit(long target, int maxBurst) {
            int burst = 0;
            while (sent < target && sent - received < window && burst < maxBurst && from.claim(tx)) {
                final MemorySegment s = tx.segment();
                final long o = tx.offset();
                BigEndian.u48(s, o, to.macAddress());
                BigEndian.u48(s, o + 6, from.macAddress());
                BigEndian.u16(s, o + 12, ethertype);
                BigEndian.i32(s, o + 30, NetnsHarness.TERN_IPV4);
                BigEndian.i64(s, o + SEQUENCE_OFFSET, sent);
                tx.length(frameLength);
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
            if (BigEndian.u16(segment, offset + 12) != ethertype) {
                return;
            }
            if (BigEndian.i64(segment, offset + SEQUENCE_OFFSET) != received || length != frameLength) {
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

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void receiveAndTransmitAllocateNothingPerFrame(Case run) {
        NetnsTesting.assumeNetns();
        try (NetnsHarness net = NetnsHarness.create(VethSetup.DEFAULT.harnessOptions().mtu(run.mtu()));
             AfXdpLink tern = net.ternNamespace().call(() -> AfXdpLink.open(NetnsHarness.TERN_INTERFACE,
                 AfXdpOptions.forAddress(NetnsHarness.TERN_IPV4)));
             AfPacketLink peer = net.openPeerLink(AfPacketLink::open, run.mtu() > 1500 ? AfPacketOptions.throughput() : AfPacketOptions.defaults())) {
            final Direction there = new Direction(tern, peer, ETHERTYPE_EXPERIMENT, run);
            final Direction back = new Direction(peer, tern, ETHERTYPE_IPV4, run);
            run(there, back, SMALL_BURST_WARMUP_FRAMES, WARMUP_BURST);
            run(there, back, WARMUP_FRAMES, BURST);

            long settling = -1;
            long target = WARMUP_FRAMES;
            final long start = System.nanoTime();
            // Up to ten settling windows until one allocates nothing (three were enough before the kick's capturing
            // sendto, 40 bytes a call below C2, left the loop: see Libc.sendtoWithoutErrno); the windows it took are
            // printed. Then one more is measured whole on every stack thread, and a per-frame allocation shows in it.
            int windows = 0;
            for (int window = 0; window < 10 && settling != 0; window++) {
                windows++;
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
            System.out.printf("AF_XDP (%s), %s: %d settling window(s); %d frames each way in %.2f s%n", tern.mode(), run, windows,
                target - WARMUP_FRAMES,
                (System.nanoTime() - start) / 1e9);
            assertNull(perFrame, "frames sent and received allocate: " + perFrame);
            assertEquals(0, there.outOfOrder + back.outOfOrder, "every frame arrived, in order");
            final long[] values = new long[tern.statisticNames().length];
            tern.statistics(values);
            assertEquals(target, values[2], "afxdp.rx.frames");
            assertEquals(target, values[11], "afxdp.tx.frames");
            assertEquals(0, values[5], "afxdp.rx.dropped");
            assertEquals(0, values[4], "afxdp.rx.too_long");
            assertEquals(0, values[15], "afxdp.tx.invalid_descs");
        }
    }
}
