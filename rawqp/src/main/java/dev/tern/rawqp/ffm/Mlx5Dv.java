package dev.tern.rawqp.ffm;

import dev.tern.rawqp.ffm.Mlx5DvLayouts.Mlx5DvCq;
import dev.tern.rawqp.ffm.Mlx5DvLayouts.Mlx5DvObj;
import dev.tern.rawqp.ffm.Mlx5DvLayouts.Mlx5DvQp;
import dev.tern.rawqp.ffm.Mlx5DvLayouts.Mlx5DvQpInitAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQpInitAttrEx;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * Hand-written FFM bindings for the mlx5 direct-verbs API ({@code libmlx5.so.1}, Debian {@code ibverbs-providers}):
 * enough to learn where libmlx5 put a raw-packet QP's rings and doorbells so that {@code Mlx5Link} can drive them
 * with plain memory stores.
 *
 * <ul>
 *   <li>{@code mlx5dv_is_supported(device)}: is this an mlx5 device?</li>
 *   <li>{@code mlx5dv_init_obj(obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ)}: the SQ/RQ buffers, doorbell record and
 *       BlueFlame register of a QP, and the CQE buffer and doorbell record of a CQ. Asking for a CQ also tells
 *       libmlx5 the application now owns its consumer index (mlx5dv.h).</li>
 *   <li>{@code mlx5dv_create_qp(ctx, ibv_qp_init_attr_ex, mlx5dv_qp_init_attr)}: the exported way to pass
 *       {@code max_tso_header}, which TSO needs and plain {@code ibv_create_qp} cannot carry.</li>
 * </ul>
 * Thread-safe; cold path only.
 */
public final class Mlx5Dv {
    private final String soname;
    private final MethodHandle isSupported;
    private final MethodHandle initObj;
    private final MethodHandle createQp;

    private Mlx5Dv(String soname, SymbolLookup library) {
        this.soname = soname;
        isSupported = ControlCalls.bind(library, soname, "mlx5dv_is_supported", FunctionDescriptor.of(JAVA_BOOLEAN, ADDRESS));
        initObj = ControlCalls.bind(library, soname, "mlx5dv_init_obj", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
        createQp = ControlCalls.bind(library, soname, "mlx5dv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    }

    /** Loads libmlx5; throws {@link NativeLibraryException} naming {@code ibverbs-providers} when it is missing. */
    public static Mlx5Dv load(NativeLibraries libraries) {
        return new Mlx5Dv(libraries.mlx5(), ControlCalls.open(libraries.mlx5(), NativeLibraries.MLX5_PACKAGE));
    }

    public String soname() {
        return soname;
    }

    /** {@code mlx5dv_is_supported(device)}. */
    public boolean isSupported(Verbs.Device device) {
        return (Boolean) ControlCalls.call(isSupported, device.pointer()).value();
    }

    /**
     * Where a QP's rings are, from {@code struct mlx5dv_qp}: raw addresses (owned by libmlx5, valid until the QP is
     * destroyed), counts in WQEs, strides in bytes.
     */
    public record QpRings(long doorbellRecord, long sqBuffer, int sqWqeCount, int sqStride, long rqBuffer, int rqWqeCount,
                          int rqStride, long blueFlameRegister, int blueFlameSize) {
    }

    /** Where a CQ's entries are, from {@code struct mlx5dv_cq}. */
    public record CqRing(long buffer, long doorbellRecord, int cqeCount, int cqeSize, int cqn) {
    }

    public QpRings initQp(MemorySegment qp) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment obj = arena.allocate(Mlx5DvObj.SIZE, 8);
            final MemorySegment out = arena.allocate(Mlx5DvQp.SIZE, 8);
            obj.set(ADDRESS, Mlx5DvObj.QP_IN_OFFSET, qp);
            obj.set(ADDRESS, Mlx5DvObj.QP_OUT_OFFSET, out);
            ControlCalls.zeroOrThrow("mlx5dv_init_obj(MLX5DV_OBJ_QP)", ControlCalls.call(initObj, obj, (long) Mlx5DvLayouts.MLX5DV_OBJ_QP), null);
            return new QpRings(out.get(JAVA_LONG, Mlx5DvQp.DBREC_OFFSET), out.get(JAVA_LONG, Mlx5DvQp.SQ_BUF_OFFSET),
                out.get(JAVA_INT, Mlx5DvQp.SQ_WQE_CNT_OFFSET), out.get(JAVA_INT, Mlx5DvQp.SQ_STRIDE_OFFSET),
                out.get(JAVA_LONG, Mlx5DvQp.RQ_BUF_OFFSET), out.get(JAVA_INT, Mlx5DvQp.RQ_WQE_CNT_OFFSET),
                out.get(JAVA_INT, Mlx5DvQp.RQ_STRIDE_OFFSET), out.get(JAVA_LONG, Mlx5DvQp.BF_REG_OFFSET),
                out.get(JAVA_INT, Mlx5DvQp.BF_SIZE_OFFSET));
        }
    }

    public CqRing initCq(MemorySegment cq) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment obj = arena.allocate(Mlx5DvObj.SIZE, 8);
            final MemorySegment out = arena.allocate(Mlx5DvCq.SIZE, 8);
            obj.set(ADDRESS, Mlx5DvObj.CQ_IN_OFFSET, cq);
            obj.set(ADDRESS, Mlx5DvObj.CQ_OUT_OFFSET, out);
            ControlCalls.zeroOrThrow("mlx5dv_init_obj(MLX5DV_OBJ_CQ)", ControlCalls.call(initObj, obj, (long) Mlx5DvLayouts.MLX5DV_OBJ_CQ), null);
            return new CqRing(out.get(JAVA_LONG, Mlx5DvCq.BUF_OFFSET), out.get(JAVA_LONG, Mlx5DvCq.DBREC_OFFSET),
                out.get(JAVA_INT, Mlx5DvCq.CQE_CNT_OFFSET), out.get(JAVA_INT, Mlx5DvCq.CQE_SIZE_OFFSET), out.get(JAVA_INT, Mlx5DvCq.CQN_OFFSET));
        }
    }

    /**
     * {@code mlx5dv_create_qp} of type {@code IBV_QPT_RAW_PACKET} with {@code max_tso_header} set, so the QP accepts
     * TSO work requests whose headers (inlined in the WQE) are up to that long.
     */
    public Verbs.QueuePair createRawPacketQp(MemorySegment context, MemorySegment pd, MemorySegment sendCq, MemorySegment recvCq,
                                             Verbs.QpCapabilities requested, int maxTsoHeader) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment attr = arena.allocate(IbvQpInitAttrEx.SIZE, 8);
            attr.set(ADDRESS, IbvQpInitAttrEx.SEND_CQ_OFFSET, sendCq);
            attr.set(ADDRESS, IbvQpInitAttrEx.RECV_CQ_OFFSET, recvCq);
            attr.set(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_SEND_WR_OFFSET, requested.maxSendWr());
            attr.set(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_RECV_WR_OFFSET, requested.maxRecvWr());
            attr.set(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_SEND_SGE_OFFSET, requested.maxSendSge());
            attr.set(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_RECV_SGE_OFFSET, requested.maxRecvSge());
            attr.set(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_INLINE_DATA_OFFSET, requested.maxInlineData());
            attr.set(JAVA_INT, IbvQpInitAttrEx.QP_TYPE_OFFSET, VerbsConstants.IBV_QPT_RAW_PACKET);
            attr.set(JAVA_INT, IbvQpInitAttrEx.SQ_SIG_ALL_OFFSET, 0);
            attr.set(JAVA_INT, IbvQpInitAttrEx.COMP_MASK_OFFSET,
                VerbsConstants.IBV_QP_INIT_ATTR_PD | VerbsConstants.IBV_QP_INIT_ATTR_MAX_TSO_HEADER);
            attr.set(ADDRESS, IbvQpInitAttrEx.PD_OFFSET, pd);
            attr.set(JAVA_SHORT, IbvQpInitAttrEx.MAX_TSO_HEADER_OFFSET, (short) maxTsoHeader);
            final MemorySegment dvAttr = arena.allocate(Mlx5DvQpInitAttr.SIZE, 8);
            final MemorySegment qp = ControlCalls.pointerOrThrow("mlx5dv_create_qp(IBV_QPT_RAW_PACKET, max_tso_header " + maxTsoHeader + ")",
                ControlCalls.call(createQp, context, attr, dvAttr), "raw-packet QPs need CAP_NET_RAW; TSO needs device support");
            final Verbs.QpCapabilities granted = new Verbs.QpCapabilities(attr.get(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_SEND_WR_OFFSET),
                attr.get(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_RECV_WR_OFFSET), attr.get(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_SEND_SGE_OFFSET),
                attr.get(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_RECV_SGE_OFFSET), attr.get(JAVA_INT, IbvQpInitAttrEx.CAP_MAX_INLINE_DATA_OFFSET));
            return new Verbs.QueuePair(qp, Verbs.qpNum(qp), granted);
        }
    }
}
