package dev.tern.rawqp;

import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.TxFrame;
import dev.tern.rawqp.ffm.Errno;
import dev.tern.rawqp.ffm.NativeLibraries;
import dev.tern.rawqp.ffm.NativeLibraryException;
import dev.tern.rawqp.ffm.Verbs;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsException;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvContext;
import dev.tern.rawqp.ffm.VerbsLayouts.VerbsContext;
import dev.tern.rawqp.ffm.VerbsOps;
import dev.tern.core.testing.Allocations;
import dev.tern.core.testing.ExternalTools;
import dev.tern.rawqp.testing.FakeVerbsProvider;
import dev.tern.rawqp.testing.LinkStatistics;
import dev.tern.rawqp.testing.TestFrames;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RawQpLink} and the inline-verb bindings against {@link FakeVerbsProvider}: a provider whose
 * {@code ibv_context.ops} and {@code verbs_context} function pointers are Java upcalls. The link's calls go through
 * exactly the pointer reads verbs.h does ({@code qp->context->ops.post_send}, {@code cq->context->ops.poll_cq},
 * {@code vctx->ibv_create_flow} behind the {@code abi_compat}/{@code sz} guard).
 */
class RawQpLinkFakeProviderTest {
    private static final long MAC = 0x0200_0000_0001L;
    private static final long PEER = 0x0200_0000_0002L;
    private static final int LKEY = 0x4242;
    private static final int MAX_INLINE = 128;
    private static final int MODERATION = 4;
    private static final int RECEIVE = 64;

    private FakeVerbsProvider provider;
    private RawQpLink link;
    private final TxFrame tx = new TxFrame();
    private final List<Integer> tags = new ArrayList<>();
    private final List<Integer> flags = new ArrayList<>();
    private int corrupt;

    @BeforeEach
    void open() {
        provider = new FakeVerbsProvider(true);
        final FramePool pool = FramePool.allocate(RECEIVE + 64, 2048);
        link = new RawQpLink("rawqp:fake:1", MAC, 1500, Offloads.TX_IPV4_CHECKSUM | Offloads.TX_L4_CHECKSUM | Offloads.RX_CHECKSUM, pool, LKEY,
            VerbsOps.of(provider.qp(), provider.sendCq(), provider.recvCq(), false), 64, RECEIVE, MAX_INLINE, MODERATION);
        link.postAllReceives();
    }

    @AfterEach
    void close() {
        link.close();
        assertEquals(List.of(), provider.errors);
        provider.close();
    }

    private void commit(int tag, int length) {
        assertTrue(link.claim(tx));
        TestFrames.udp(tx.segment(), tx.offset(), PEER, MAC, tag, length, true);
        tx.length(length).requestIpChecksum().requestL4Checksum(34, 6);
        link.commit(tx);
    }

    private int receiveAll() {
        int total = 0;
        int n;
        while ((n = link.receive((segment, offset, length, frameFlags) -> {
            if (!TestFrames.payloadIntact(segment, offset, TestFrames.UDP_PAYLOAD, length)) {
                corrupt++;
            }
            tags.add(TestFrames.tag(segment, offset, TestFrames.UDP_PAYLOAD));
            flags.add(frameFlags);
        }, 16)) > 0) {
            total += n;
        }
        return total;
    }

    @Test
    void everyReceiveBufferIsPostedInOneChainAtStart() {
        assertEquals(1, provider.postRecvCalls.size());
        assertEquals(RECEIVE, provider.postRecvCalls.getFirst().size());
        assertEquals(0L, provider.postRecvCalls.getFirst().getFirst());
        assertEquals(RECEIVE, provider.receiveBuffersHeld());
    }

    @Test
    void aBatchIsOnePostSendWithChainedWorkRequests() {
        for (int i = 0; i < 10; i++) {
            commit(i, i % 2 == 0 ? 100 : 1000);
        }
        assertEquals(10, link.flush());
        assertEquals(1, provider.postSendCalls.size(), "one post_send (one doorbell) per flush");
        final List<FakeVerbsProvider.SendRequest> chain = provider.postSendCalls.getFirst();
        assertEquals(10, chain.size());
        for (int i = 0; i < 10; i++) {
            final FakeVerbsProvider.SendRequest request = chain.get(i);
            assertEquals(i, request.wrId(), "wr_id is the frame's sequence number");
            assertEquals(VerbsConstants.IBV_WR_SEND, request.opcode());
            assertEquals(1, request.numSge());
            assertEquals(LKEY, request.lkey());
            assertEquals(i % 2 == 0 ? 100 : 1000, request.length());
            assertEquals(i % 2 == 0, (request.flags() & VerbsConstants.IBV_SEND_INLINE) != 0, "inline when it fits max_inline_data");
            assertEquals(i % MODERATION == MODERATION - 1, (request.flags() & VerbsConstants.IBV_SEND_SIGNALED) != 0, "every 4th signalled");
            assertTrue((request.flags() & VerbsConstants.IBV_SEND_IP_CSUM) != 0);
        }
        assertEquals(5, link.txInline());
    }

    @Test
    void framesLoopBackInOrderIntactAndReceivedBuffersAreRepostedOncePerBatch() {
        for (int i = 0; i < 20; i++) {
            commit(i, 60 + 71 * i);
            if (i % 5 == 4) {
                link.flush();
            }
        }
        provider.step();
        assertEquals(20, receiveAll());
        assertEquals(Mlx5LinkRingModelTest.range(0, 20), tags);
        assertEquals(0, corrupt, "no buffer was reused before its send completed");
        assertEquals(List.of(Offloads.RX_CHECKSUM_OK), flags.stream().distinct().toList());
        assertEquals(List.of(16, 4), provider.postRecvCalls.subList(1, provider.postRecvCalls.size()).stream().map(List::size).toList(),
            "one chained post_recv per receive call");
        assertEquals(RECEIVE, provider.receiveBuffersHeld(), "every buffer went back");
    }

    /**
     * Held-frame receive through verbs: a lent frame's slot is re-posted with a fresh buffer's address, so the provider
     * never writes into the lent one, however many times every slot is filled again; returned, it is the slab's.
     */
    @Test
    void aLentFrameKeepsItsBufferWhileItsSlotIsRepostedWithAnother() {
        commit(7, 300);
        link.flush();
        provider.step();
        final MemorySegment[] where = new MemorySegment[1];
        final long[] at = new long[1];
        final int[] lease = {-1};
        assertEquals(1, link.receive((segment, offset, length, frameFlags) -> {
            lease[0] = link.lendFrame(segment, offset);
            where[0] = segment;
            at[0] = offset;
        }, 16));
        assertTrue(lease[0] >= 0);
        for (int i = 0; i < 4 * RECEIVE; i++) {
            commit(100 + i, 200);
            if (i % 8 == 7) {
                link.flush();
                provider.step();
                receiveAll();
            }
        }
        assertEquals(4 * RECEIVE, tags.size());
        assertEquals(0, corrupt);
        assertEquals(7, TestFrames.tag(where[0], at[0], TestFrames.UDP_PAYLOAD), "the lent frame untouched");
        assertEquals(RECEIVE, provider.receiveBuffersHeld(), "every slot posted again");
        final int inUse = link.buffersInUse();
        link.returnFrame(lease[0]);
        assertEquals(inUse - 1, link.buffersInUse());
    }

    @Test
    void inlineFramesFreeTheirBufferAtOnceOthersWaitForASignalledCompletion() {
        commit(1, 100);
        commit(2, 1000);
        commit(3, 1000);
        link.flush();
        assertEquals(RECEIVE + 2, link.buffersInUse(), "the inline frame's buffer is free after post_send returns");
        commit(4, 1000);
        link.flush();
        provider.step();
        link.flush();
        assertEquals(RECEIVE, link.buffersInUse(), "the signalled 4th WR completed and freed all before it");
    }

    @Test
    void aRefusedPostSendDropsTheRestOfTheBatchFreesTheirBuffersAndSignalsTheNext() {
        provider.failNextPostSendAt(3);
        for (int i = 0; i < 6; i++) {
            commit(i, 1000);
        }
        assertEquals(3, link.flush());
        assertEquals(3, link.txDropped());
        assertEquals(RECEIVE + 3, link.buffersInUse());
        commit(100, 1000);
        link.flush();
        final FakeVerbsProvider.SendRequest next = provider.postSendCalls.getLast().getFirst();
        assertEquals(3, next.wrId(), "sequence numbers continue after the last posted WR");
        assertTrue((next.flags() & VerbsConstants.IBV_SEND_SIGNALED) != 0, "the next WR is signalled");
        provider.step();
        link.flush();
        assertEquals(RECEIVE, link.buffersInUse());
        receiveAll();
        assertEquals(List.of(0, 1, 2, 100), tags);
    }

    @Nested
    class Statistics {
        @Test
        void theCommonStatisticsComeFirstThenPostSendCallsInlineSendsAndRefusedReposts() {
            assertEquals(List.of("rx.frames", "rx.bytes", "rx.errors", "rx.dropped", "tx.frames", "tx.dropped", "tx.errors", "tx.busy",
                "buffers_in_use", "tx.post_send_calls", "tx.inline", "rx.post_failures"), List.of(link.statisticNames()));
            final Map<String, Long> fresh = LinkStatistics.read(link);
            assertEquals((long) RECEIVE, fresh.get("buffers_in_use"), "the posted receive buffers");
            fresh.remove("buffers_in_use");
            assertEquals(List.of(0L), fresh.values().stream().distinct().toList(), "nothing counted yet: " + fresh);
        }

        @Test
        void framesSentAndReceivedMoveTheFrameBytePostAndInlineCounters() {
            long bytes = 0;
            for (int i = 0; i < 10; i++) {
                commit(i, i % 2 == 0 ? 100 : 1000);
                bytes += i % 2 == 0 ? 100 : 1000;
            }
            link.flush();
            commit(10, 90);
            bytes += 90;
            link.flush();
            provider.step();
            assertEquals(11, receiveAll());
            final Map<String, Long> stats = LinkStatistics.read(link);
            assertEquals(11L, stats.get("tx.frames"));
            assertEquals(2L, stats.get("tx.post_send_calls"), "one per flush with frames");
            assertEquals(6L, stats.get("tx.inline"), "the frames no longer than max_inline_data");
            assertEquals(11L, stats.get("rx.frames"));
            assertEquals(bytes, stats.get("rx.bytes"));
            assertEquals(0L, stats.get("rx.errors") + stats.get("rx.dropped") + stats.get("tx.dropped") + stats.get("tx.errors")
                + stats.get("tx.busy") + stats.get("rx.post_failures"));
        }

        @Test
        void receiveErrorsImpossibleLengthsAndRefusedRepostsAreCountedApart() {
            provider.inject(new byte[3000]);
            provider.inject(new byte[10]);
            provider.inject(new byte[2500]);
            provider.step();
            provider.failNextPostRecv();
            assertEquals(0, receiveAll());
            final Map<String, Long> stats = LinkStatistics.read(link);
            assertEquals(2L, stats.get("rx.errors"), "longer than the buffer: an error completion");
            assertEquals(1L, stats.get("rx.dropped"), "10 bytes cannot be an Ethernet frame");
            assertEquals(1L, stats.get("rx.post_failures"));
            assertEquals(0L, stats.get("rx.frames"));
            assertEquals(RECEIVE - 3, provider.receiveBuffersHeld(), "the refused re-post left the provider three buffers short");
        }

        @Test
        void refusedClaimsAndRefusedPostsAreCountedAsBusyDroppedAndErrors() {
            final List<TxFrame> claimed = new ArrayList<>();
            TxFrame frame = new TxFrame();
            while (link.claim(frame)) {
                claimed.add(frame);
                frame = new TxFrame();
            }
            assertEquals(64, claimed.size(), "a 64-entry send queue");
            for (int i = 0; i < 4; i++) {
                assertFalse(link.claim(frame));
            }
            claimed.forEach(link::abort);
            assertEquals(5L, LinkStatistics.read(link).get("tx.busy"), "every claim after the 64th");
            provider.failNextPostSendAt(2);
            for (int i = 0; i < 5; i++) {
                commit(i, 1000);
            }
            assertEquals(2, link.flush());
            final Map<String, Long> stats = LinkStatistics.read(link);
            assertEquals(5L, stats.get("tx.busy"));
            assertEquals(3L, stats.get("tx.dropped"), "the refused WR and the rest of its chain");
            assertEquals(1L, stats.get("tx.errors"), "one refused post_send");
            assertEquals(2L, stats.get("tx.frames"));
            assertEquals(1L, stats.get("tx.post_send_calls"));
            assertEquals(RECEIVE + 2L, stats.get("buffers_in_use"), "the two posted frames wait for a completion");
        }
    }

    @Test
    void readingTheStatisticsAllocatesNothing() {
        final long[] values = new long[link.statisticNames().length];
        final Runnable read = () -> link.statistics(values);
        assertEquals(0, Allocations.measure(20_000, 1_000_000, read), "bytes allocated by a million reads after warm-up");
    }

    @Nested
    class FlowSteeringThroughTheVerbsContext {
        private Verbs verbs;

        @BeforeEach
        void loadVerbs() {
            try {
                verbs = Verbs.load(NativeLibraries.DEFAULT);
            } catch (NativeLibraryException e) {
                ExternalTools.skip("libibverbs does not load: " + e.getMessage());
            }
        }

        @Test
        void createAndDestroyFlowCallTheOpsBehindTheContextPassingTheEncodedRule() {
            final FlowRule rule = FlowRule.udp(MAC, TestFrames.DESTINATION_IP, 319);
            try (Arena arena = Arena.ofConfined()) {
                final MemorySegment encoded = rule.encode(arena, 1);
                final MemorySegment flow = verbs.createFlow(provider.qp(), encoded);
                assertEquals(provider.createdFlows.getFirst().address(), flow.address());
                assertArrayEquals(encoded.toArray(ValueLayout.JAVA_BYTE), provider.flowAttributes.getFirst());
                verbs.destroyFlow(flow);
                assertEquals(List.of(flow.address()), provider.destroyedFlows);
            }
        }

        @Test
        void aContextThatIsNotExtendedHasNoFlowSteering() {
            provider.context().set(ValueLayout.JAVA_LONG, IbvContext.ABI_COMPAT_OFFSET, 0);
            assertUnsupported();
        }

        @Test
        void aVerbsContextTooShortToReachTheOpHasNoFlowSteering() {
            // verbs.h: usable only if sz >= sizeof(struct verbs_context) - offsetof(op); for ibv_create_flow that is 408.
            provider.verbsContext().set(ValueLayout.JAVA_LONG, VerbsContext.SZ_OFFSET, VerbsContext.SIZE - VerbsContext.IBV_CREATE_FLOW_OFFSET - 1);
            assertUnsupported();
            provider.verbsContext().set(ValueLayout.JAVA_LONG, VerbsContext.SZ_OFFSET, VerbsContext.SIZE - VerbsContext.IBV_CREATE_FLOW_OFFSET);
            assertEquals(provider.verbsContext().get(ValueLayout.ADDRESS, VerbsContext.IBV_CREATE_FLOW_OFFSET).address(),
                Verbs.extendedOp(provider.context(), VerbsContext.IBV_CREATE_FLOW_OFFSET).address(), "408 is enough");
        }

        @Test
        void aNullOpHasNoFlowSteering() {
            provider.verbsContext().set(ValueLayout.ADDRESS, VerbsContext.IBV_CREATE_FLOW_OFFSET, MemorySegment.NULL);
            assertUnsupported();
        }

        private void assertUnsupported() {
            try (Arena arena = Arena.ofConfined()) {
                final VerbsException e = assertThrows(VerbsException.class,
                    () -> verbs.createFlow(provider.qp(), FlowRule.destinationMac(MAC).encode(arena, 1)));
                assertEquals(Errno.EOPNOTSUPP, e.errno());
                assertEquals("ibv_create_flow", e.call());
                assertEquals(List.of(), provider.createdFlows);
            }
        }
    }
}
