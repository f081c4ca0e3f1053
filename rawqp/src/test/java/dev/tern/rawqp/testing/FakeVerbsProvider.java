package dev.tern.rawqp.testing;

import dev.tern.rawqp.ffm.Errno;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvContext;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvCq;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlow;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQp;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvRecvWr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvSendWr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvSge;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvWc;
import dev.tern.rawqp.ffm.VerbsLayouts.VerbsContext;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * A verbs provider made of Java upcalls, laid out in native memory the way libibverbs lays out a real one, so that
 * the bindings' inline-verb paths run for real through function pointers:
 *
 * <pre>
 *   [ struct verbs_context (648): ... query_device_ex, ibv_destroy_flow, ibv_create_flow ... sz | ibv_context (328) ]
 *                                                                                              ^ context
 *   context.ops.post_send / post_recv / poll_cq  -> upcall stubs
 *   ibv_qp.context, ibv_cq.context               -> context
 * </pre>
 *
 * <p>As a "device" it records every work request it is given, copies send data when it completes a send (so a
 * buffer freed too early shows up as corrupt data), loops frames back into posted receive buffers and reports
 * completions through {@code poll_cq}. Inline sends are copied during {@code post_send}, as the verbs API promises.
 * Test-only; upcalls catch everything (an exception escaping an upcall would end the JVM).
 */
// Binding C means restricted FFM methods (reinterpret, downcalls); the JVM runs with --enable-native-access.
@SuppressWarnings("restricted")
public final class FakeVerbsProvider implements AutoCloseable {
    /** A send work request as the provider saw it. */
    public record SendRequest(long wrId, int opcode, int flags, long address, int length, int lkey, int numSge) {
    }

    /** A receive buffer the provider holds. */
    record Posted(long wrId, long address, int length, int lkey) {
    }

    private record Completion(long wrId, int status, int opcode, int byteLength, int flags) {
    }

    private final Arena arena = Arena.ofShared();
    private final MemorySegment vctx;
    private final MemorySegment context;
    private final MemorySegment qp;
    private final MemorySegment sendCq;
    private final MemorySegment recvCq;

    public final List<List<SendRequest>> postSendCalls = new ArrayList<>();
    public final List<List<Long>> postRecvCalls = new ArrayList<>();
    public final List<MemorySegment> createdFlows = new ArrayList<>();
    public final List<byte[]> flowAttributes = new ArrayList<>();
    public final List<Long> destroyedFlows = new ArrayList<>();
    public final List<String> errors = new ArrayList<>();
    private final ArrayDeque<SendRequest> inFlight = new ArrayDeque<>();
    private final ArrayDeque<byte[]> wire = new ArrayDeque<>();
    private final ArrayDeque<byte[]> inlineCopies = new ArrayDeque<>();
    private final ArrayDeque<Posted> receiveBuffers = new ArrayDeque<>();
    private final ArrayDeque<Completion> sendCompletions = new ArrayDeque<>();
    private final ArrayDeque<Completion> recvCompletions = new ArrayDeque<>();
    private int failPostSendAt = -1;
    private boolean failNextPostRecv;
    private final boolean checksumOk;

    /** @param checksumOk report {@code IBV_WC_IP_CSUM_OK} on received frames */
    public FakeVerbsProvider(boolean checksumOk) {
        this.checksumOk = checksumOk;
        this.vctx = arena.allocate(VerbsContext.SIZE, 64);
        this.context = vctx.asSlice(VerbsContext.CONTEXT_OFFSET, IbvContext.SIZE);
        this.qp = arena.allocate(IbvQp.SIZE, 8);
        this.sendCq = arena.allocate(IbvCq.SIZE, 8);
        this.recvCq = arena.allocate(IbvCq.SIZE, 8);
        qp.set(ADDRESS, IbvQp.CONTEXT_OFFSET, context);
        qp.set(JAVA_INT, IbvQp.QP_NUM_OFFSET, 0x77);
        sendCq.set(ADDRESS, IbvCq.CONTEXT_OFFSET, context);
        recvCq.set(ADDRESS, IbvCq.CONTEXT_OFFSET, context);
        final FunctionDescriptor post = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
        context.set(ADDRESS, IbvContext.OPS_POST_SEND_OFFSET, stub("postSend", post));
        context.set(ADDRESS, IbvContext.OPS_POST_RECV_OFFSET, stub("postRecv", post));
        context.set(ADDRESS, IbvContext.OPS_POLL_CQ_OFFSET, stub("pollCq", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS)));
        context.set(JAVA_LONG, IbvContext.ABI_COMPAT_OFFSET, VerbsContext.ABI_IS_EXTENDED);
        vctx.set(JAVA_LONG, VerbsContext.SZ_OFFSET, VerbsContext.SIZE);
        vctx.set(ADDRESS, VerbsContext.IBV_CREATE_FLOW_OFFSET, stub("createFlow", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS)));
        vctx.set(ADDRESS, VerbsContext.IBV_DESTROY_FLOW_OFFSET, stub("destroyFlow", FunctionDescriptor.of(JAVA_INT, ADDRESS)));
    }

    private MemorySegment stub(String method, FunctionDescriptor descriptor) {
        try {
            final MethodType type = descriptor.toMethodType();
            final MethodHandle target = MethodHandles.lookup().findVirtual(FakeVerbsProvider.class, method, type).bindTo(this);
            return Linker.nativeLinker().upcallStub(target, descriptor, arena);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    public MemorySegment context() {
        return context;
    }

    /** The verbs_context that precedes the context, for tests that break its guard fields. */
    public MemorySegment verbsContext() {
        return vctx;
    }

    public MemorySegment qp() {
        return qp;
    }

    public MemorySegment sendCq() {
        return sendCq;
    }

    public MemorySegment recvCq() {
        return recvCq;
    }

    /** The next post_send fails at the WR with this index in its chain (EINVAL, {@code *bad_wr} set). */
    public void failNextPostSendAt(int index) {
        failPostSendAt = index;
    }

    /** The next post_recv refuses its whole chain (ENOMEM, {@code *bad_wr} = the first WR); the provider keeps none of it. */
    public void failNextPostRecv() {
        failNextPostRecv = true;
    }

    /** Puts a frame on the wire as if a peer sent it; the next {@link #step()} delivers it. */
    public void inject(byte[] frame) {
        wire.add(frame.clone());
    }

    public int receiveBuffersHeld() {
        return receiveBuffers.size();
    }

    /** Completes every send in flight (copying its data to the wire) and delivers wire frames into receive buffers. */
    public void step() {
        while (!inFlight.isEmpty()) {
            final SendRequest request = inFlight.poll();
            final byte[] frame = (request.flags() & VerbsConstants.IBV_SEND_INLINE) != 0 ? inlineCopies.poll()
                : MemorySegment.ofAddress(request.address()).reinterpret(request.length()).toArray(ValueLayout.JAVA_BYTE);
            wire.add(frame);
            if ((request.flags() & VerbsConstants.IBV_SEND_SIGNALED) != 0) {
                sendCompletions.add(new Completion(request.wrId(), VerbsConstants.IBV_WC_SUCCESS, VerbsConstants.IBV_WC_SEND, 0, 0));
            }
        }
        while (!wire.isEmpty() && !receiveBuffers.isEmpty()) {
            final byte[] frame = wire.poll();
            final Posted buffer = receiveBuffers.poll();
            if (frame.length > buffer.length()) {
                recvCompletions.add(new Completion(buffer.wrId(), 1, VerbsConstants.IBV_WC_RECV, 0, 0));
                continue;
            }
            MemorySegment.copy(MemorySegment.ofArray(frame), 0, MemorySegment.ofAddress(buffer.address()).reinterpret(frame.length), 0, frame.length);
            recvCompletions.add(new Completion(buffer.wrId(), VerbsConstants.IBV_WC_SUCCESS, VerbsConstants.IBV_WC_RECV, frame.length,
                checksumOk ? VerbsConstants.IBV_WC_IP_CSUM_OK : 0));
        }
    }

    // Upcalls: the provider's function pointers.

    int postSend(MemorySegment qpArg, MemorySegment wr, MemorySegment badWr) {
        try {
            if (qpArg.address() != qp.address()) {
                errors.add("post_send on a different QP");
            }
            final List<SendRequest> chain = new ArrayList<>();
            int index = 0;
            for (MemorySegment at = wr; at.address() != 0; index++) {
                final MemorySegment w = at.reinterpret(IbvSendWr.SIZE);
                if (index == failPostSendAt) {
                    failPostSendAt = -1;
                    badWr.reinterpret(8).set(ADDRESS, 0, w);
                    postSendCalls.add(chain);
                    return Errno.EINVAL;
                }
                final MemorySegment sge = w.get(ADDRESS, IbvSendWr.SG_LIST_OFFSET).reinterpret(IbvSge.SIZE);
                final SendRequest request = new SendRequest(w.get(JAVA_LONG, IbvSendWr.WR_ID_OFFSET), w.get(JAVA_INT, IbvSendWr.OPCODE_OFFSET),
                    w.get(JAVA_INT, IbvSendWr.SEND_FLAGS_OFFSET), sge.get(JAVA_LONG, IbvSge.ADDR_OFFSET), sge.get(JAVA_INT, IbvSge.LENGTH_OFFSET),
                    sge.get(JAVA_INT, IbvSge.LKEY_OFFSET), w.get(JAVA_INT, IbvSendWr.NUM_SGE_OFFSET));
                if ((request.flags() & VerbsConstants.IBV_SEND_INLINE) != 0) {
                    inlineCopies.add(MemorySegment.ofAddress(request.address()).reinterpret(request.length()).toArray(ValueLayout.JAVA_BYTE));
                }
                chain.add(request);
                inFlight.add(request);
                at = w.get(ADDRESS, IbvSendWr.NEXT_OFFSET);
            }
            postSendCalls.add(chain);
            return 0;
        } catch (Throwable t) {
            errors.add("post_send: " + t);
            return Errno.EIO;
        }
    }

    int postRecv(MemorySegment qpArg, MemorySegment wr, MemorySegment badWr) {
        try {
            if (failNextPostRecv) {
                failNextPostRecv = false;
                badWr.reinterpret(8).set(ADDRESS, 0, wr);
                return Errno.ENOMEM;
            }
            final List<Long> chain = new ArrayList<>();
            for (MemorySegment at = wr; at.address() != 0; ) {
                final MemorySegment w = at.reinterpret(IbvRecvWr.SIZE);
                final MemorySegment sge = w.get(ADDRESS, IbvRecvWr.SG_LIST_OFFSET).reinterpret(IbvSge.SIZE);
                final long wrId = w.get(JAVA_LONG, IbvRecvWr.WR_ID_OFFSET);
                if (w.get(JAVA_INT, IbvRecvWr.NUM_SGE_OFFSET) != 1) {
                    errors.add("receive WR with " + w.get(JAVA_INT, IbvRecvWr.NUM_SGE_OFFSET) + " SGEs");
                }
                receiveBuffers.add(new Posted(wrId, sge.get(JAVA_LONG, IbvSge.ADDR_OFFSET), sge.get(JAVA_INT, IbvSge.LENGTH_OFFSET),
                    sge.get(JAVA_INT, IbvSge.LKEY_OFFSET)));
                chain.add(wrId);
                at = w.get(ADDRESS, IbvRecvWr.NEXT_OFFSET);
            }
            postRecvCalls.add(chain);
            return 0;
        } catch (Throwable t) {
            errors.add("post_recv: " + t);
            return Errno.EIO;
        }
    }

    int pollCq(MemorySegment cq, int entries, MemorySegment wc) {
        try {
            final ArrayDeque<Completion> queue = cq.address() == sendCq.address() ? sendCompletions : recvCompletions;
            final MemorySegment out = wc.reinterpret((long) entries * IbvWc.SIZE);
            int n = 0;
            while (n < entries && !queue.isEmpty()) {
                final Completion c = queue.poll();
                final long base = (long) n * IbvWc.SIZE;
                out.asSlice(base, IbvWc.SIZE).fill((byte) 0);
                out.set(JAVA_LONG, base + IbvWc.WR_ID_OFFSET, c.wrId());
                out.set(JAVA_INT, base + IbvWc.STATUS_OFFSET, c.status());
                out.set(JAVA_INT, base + IbvWc.OPCODE_OFFSET, c.opcode());
                out.set(JAVA_INT, base + IbvWc.BYTE_LEN_OFFSET, c.byteLength());
                out.set(JAVA_INT, base + IbvWc.WC_FLAGS_OFFSET, c.flags());
                n++;
            }
            return n;
        } catch (Throwable t) {
            errors.add("poll_cq: " + t);
            return -1;
        }
    }

    MemorySegment createFlow(MemorySegment qpArg, MemorySegment attr) {
        try {
            final int size = Short.toUnsignedInt(attr.reinterpret(20).get(ValueLayout.JAVA_SHORT, 8));
            flowAttributes.add(attr.reinterpret(size).toArray(ValueLayout.JAVA_BYTE));
            final MemorySegment flow = arena.allocate(24, 8);
            flow.set(ADDRESS, IbvFlow.CONTEXT_OFFSET, context);
            createdFlows.add(flow);
            return flow;
        } catch (Throwable t) {
            errors.add("create_flow: " + t);
            return MemorySegment.NULL;
        }
    }

    int destroyFlow(MemorySegment flow) {
        destroyedFlows.add(flow.address());
        return 0;
    }

    @Override
    public void close() {
        arena.close();
    }
}
