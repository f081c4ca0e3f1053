package dev.tern.rawqp.ffm;

import dev.tern.rawqp.ffm.VerbsLayouts.IbvContext;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvCq;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQp;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The verbs data path for one queue pair: {@code ibv_post_send}, {@code ibv_post_recv} and {@code ibv_poll_cq}.
 *
 * <p>These have no symbol in libibverbs: verbs.h defines them as static inlines that call the provider's function
 * pointers in {@code struct ibv_context.ops}, found through the object's own {@code context}:
 * <pre>
 *   ibv_post_send(qp, wr, bad) = qp->context->ops.post_send(qp, wr, bad)    ops.post_send at ibv_context+208
 *   ibv_post_recv(qp, wr, bad) = qp->context->ops.post_recv(qp, wr, bad)    ops.post_recv at ibv_context+216
 *   ibv_poll_cq(cq, n, wc)     = cq->context->ops.poll_cq(cq, n, wc)        ops.poll_cq   at ibv_context+96
 * </pre>
 * We read the same pointers once, at construction (the provider never changes them), and call them through one
 * static address-taking downcall handle per signature, so the JIT sees a constant handle.
 *
 * <p>No errno capture here: post returns an errno value itself, poll returns a negative count on error. With
 * {@code critical} the calls use {@link Linker.Option#critical}, which skips the thread-state transition; that is
 * right for libmlx5's post/poll (short, non-blocking, never call back into Java) but not for a provider written
 * as Java upcalls, as tests use.
 *
 * <p>Owned by the link's shard thread. Calls are allocation-free once compiled.
 */
// Binding C means restricted FFM methods (reinterpret, downcalls); the JVM runs with --enable-native-access.
@SuppressWarnings("restricted")
public final class VerbsOps {
    private static final FunctionDescriptor POST = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor POLL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);
    private static final MethodHandle POST_PLAIN = ControlCalls.LINKER.downcallHandle(POST);
    private static final MethodHandle POLL_PLAIN = ControlCalls.LINKER.downcallHandle(POLL);
    private static final MethodHandle POST_CRITICAL = ControlCalls.LINKER.downcallHandle(POST, Linker.Option.critical(false));
    private static final MethodHandle POLL_CRITICAL = ControlCalls.LINKER.downcallHandle(POLL, Linker.Option.critical(false));

    private final MemorySegment qp;
    private final MemorySegment sendCq;
    private final MemorySegment recvCq;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final MemorySegment pollSendCq;
    private final MemorySegment pollRecvCq;
    private final boolean critical;

    private VerbsOps(MemorySegment qp, MemorySegment sendCq, MemorySegment recvCq, boolean critical) {
        this.qp = qp;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.critical = critical;
        final MemorySegment qpContext = contextOf(qp, IbvQp.SIZE, IbvQp.CONTEXT_OFFSET);
        this.postSend = opsFunction(qpContext, IbvContext.OPS_POST_SEND_OFFSET, "post_send");
        this.postRecv = opsFunction(qpContext, IbvContext.OPS_POST_RECV_OFFSET, "post_recv");
        this.pollSendCq = opsFunction(contextOf(sendCq, IbvCq.SIZE, IbvCq.CONTEXT_OFFSET), IbvContext.OPS_POLL_CQ_OFFSET, "poll_cq");
        this.pollRecvCq = opsFunction(contextOf(recvCq, IbvCq.SIZE, IbvCq.CONTEXT_OFFSET), IbvContext.OPS_POLL_CQ_OFFSET, "poll_cq");
    }

    /** Reads the provider's functions for {@code qp} and its two CQs. */
    public static VerbsOps of(MemorySegment qp, MemorySegment sendCq, MemorySegment recvCq, boolean critical) {
        return new VerbsOps(qp, sendCq, recvCq, critical);
    }

    private static MemorySegment contextOf(MemorySegment object, int size, int contextOffset) {
        return object.reinterpret(size).get(ADDRESS, contextOffset);
    }

    private static MemorySegment opsFunction(MemorySegment context, int offset, String name) {
        final MemorySegment function = context.reinterpret(IbvContext.SIZE).get(ADDRESS, offset);
        if (function.address() == 0) {
            throw new VerbsException("ibv_context.ops." + name, Errno.EOPNOTSUPP, "the provider left the function pointer NULL");
        }
        return function;
    }

    /** {@code ibv_post_send(qp, wr, badWr)}: 0, or an errno value with {@code *badWr} at the first WR not posted. */
    public int postSend(MemorySegment wr, MemorySegment badWr) {
        try {
            return critical ? (int) POST_CRITICAL.invokeExact(postSend, qp, wr, badWr) : (int) POST_PLAIN.invokeExact(postSend, qp, wr, badWr);
        } catch (Throwable t) {
            throw new IllegalStateException("ops.post_send", t);
        }
    }

    /** {@code ibv_post_recv(qp, wr, badWr)}. */
    public int postRecv(MemorySegment wr, MemorySegment badWr) {
        try {
            return critical ? (int) POST_CRITICAL.invokeExact(postRecv, qp, wr, badWr) : (int) POST_PLAIN.invokeExact(postRecv, qp, wr, badWr);
        } catch (Throwable t) {
            throw new IllegalStateException("ops.post_recv", t);
        }
    }

    /** {@code ibv_poll_cq(sendCq, entries, wc)}: completions written, or negative on error. */
    public int pollSendCq(int entries, MemorySegment wc) {
        return poll(pollSendCq, sendCq, entries, wc);
    }

    /** {@code ibv_poll_cq(recvCq, entries, wc)}. */
    public int pollRecvCq(int entries, MemorySegment wc) {
        return poll(pollRecvCq, recvCq, entries, wc);
    }

    private int poll(MemorySegment function, MemorySegment cq, int entries, MemorySegment wc) {
        try {
            return critical ? (int) POLL_CRITICAL.invokeExact(function, cq, entries, wc) : (int) POLL_PLAIN.invokeExact(function, cq, entries, wc);
        } catch (Throwable t) {
            throw new IllegalStateException("ops.poll_cq", t);
        }
    }
}
