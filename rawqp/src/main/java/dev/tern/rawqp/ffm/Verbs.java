package dev.tern.rawqp.ffm;

import dev.tern.rawqp.ffm.VerbsLayouts.IbvContext;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvDeviceAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvDeviceAttrEx;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlow;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvMr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvPortAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQp;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQpAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQpInitAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvQueryDeviceExInput;
import dev.tern.rawqp.ffm.VerbsLayouts.VerbsContext;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.List;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * Hand-written FFM bindings for the control plane of libibverbs ({@code libibverbs.so.1}, Debian
 * {@code libibverbs1}): devices, contexts, ports, protection domains, memory regions, completion queues,
 * raw-packet queue pairs and flow steering.
 *
 * <p>Three kinds of entry point, following {@code <infiniband/verbs.h>} exactly:
 * <ul>
 *   <li>Exported symbols, bound with dlsym: {@code ibv_get_device_list}, {@code ibv_open_device},
 *       {@code ibv_query_port}, {@code ibv_reg_mr}, {@code ibv_create_qp}, ... Where verbs.h wraps one in a macro or
 *       inline ({@code ibv_reg_mr}, {@code ibv_query_port}, {@code ibv_get_device_list}), the wrapper only matters
 *       for cases we do not use (optional access flags, static linking) and the export is the right target.</li>
 *   <li>Inline-only extended verbs ({@code ibv_create_flow}, {@code ibv_destroy_flow}, {@code ibv_query_device_ex}):
 *       verbs.h calls them through {@code struct verbs_context}, which lies before the {@code ibv_context}; we do
 *       the same, with the same {@code abi_compat}/{@code sz}/NULL guard ({@link #extendedOp}).</li>
 *   <li>Inline-only data-path verbs ({@code ibv_post_send}, {@code ibv_post_recv}, {@code ibv_poll_cq}) are
 *       {@code ctx->ops.*} function pointers; see {@link VerbsOps}.</li>
 * </ul>
 *
 * <p>Every call captures errno and turns a failure into a {@link VerbsException} naming the call. Pointers to C
 * objects are zero-length {@link MemorySegment}s; their memory belongs to libibverbs. Thread-safe (no state beyond
 * the bound handles); meant for cold paths only.
 */
// Binding C means restricted FFM methods (reinterpret, downcalls); the JVM runs with --enable-native-access.
@SuppressWarnings("restricted")
public final class Verbs {
    private static final String CAP_NET_RAW_HINT = "raw-packet QPs need CAP_NET_RAW (run as root or grant the capability)";

    private final String soname;
    private final MethodHandle getDeviceList;
    private final MethodHandle freeDeviceList;
    private final MethodHandle getDeviceName;
    private final MethodHandle openDevice;
    private final MethodHandle closeDevice;
    private final MethodHandle queryDevice;
    private final MethodHandle queryPort;
    private final MethodHandle allocPd;
    private final MethodHandle deallocPd;
    private final MethodHandle regMr;
    private final MethodHandle deregMr;
    private final MethodHandle createCq;
    private final MethodHandle destroyCq;
    private final MethodHandle createQp;
    private final MethodHandle modifyQp;
    private final MethodHandle destroyQp;

    private Verbs(String soname, SymbolLookup library) {
        this.soname = soname;
        getDeviceList = bind(library, "ibv_get_device_list", FunctionDescriptor.of(ADDRESS, ADDRESS));
        freeDeviceList = bind(library, "ibv_free_device_list", FunctionDescriptor.ofVoid(ADDRESS));
        getDeviceName = bind(library, "ibv_get_device_name", FunctionDescriptor.of(ADDRESS, ADDRESS));
        openDevice = bind(library, "ibv_open_device", FunctionDescriptor.of(ADDRESS, ADDRESS));
        closeDevice = bind(library, "ibv_close_device", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        queryDevice = bind(library, "ibv_query_device", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
        queryPort = bind(library, "ibv_query_port", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_BYTE, ADDRESS));
        allocPd = bind(library, "ibv_alloc_pd", FunctionDescriptor.of(ADDRESS, ADDRESS));
        deallocPd = bind(library, "ibv_dealloc_pd", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        regMr = bind(library, "ibv_reg_mr", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT));
        deregMr = bind(library, "ibv_dereg_mr", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createCq = bind(library, "ibv_create_cq", FunctionDescriptor.of(ADDRESS, ADDRESS, JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        destroyCq = bind(library, "ibv_destroy_cq", FunctionDescriptor.of(JAVA_INT, ADDRESS));
        createQp = bind(library, "ibv_create_qp", FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS));
        modifyQp = bind(library, "ibv_modify_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        destroyQp = bind(library, "ibv_destroy_qp", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    }

    /** Loads libibverbs; throws {@link NativeLibraryException} naming the Debian packages when it is not installed. */
    public static Verbs load(NativeLibraries libraries) {
        return new Verbs(libraries.verbs(), ControlCalls.open(libraries.verbs(), NativeLibraries.VERBS_PACKAGES));
    }

    private MethodHandle bind(SymbolLookup library, String symbol, FunctionDescriptor descriptor) {
        return ControlCalls.bind(library, soname, symbol, descriptor);
    }

    /** One entry of {@code ibv_get_device_list}: valid until the list is closed. */
    public record Device(String name, MemorySegment pointer) {
    }

    /** The result of {@code ibv_get_device_list}; closing it calls {@code ibv_free_device_list}. */
    public final class DeviceList implements AutoCloseable {
        private final MemorySegment array;
        private final List<Device> devices;

        private DeviceList(MemorySegment array, List<Device> devices) {
            this.array = array;
            this.devices = devices;
        }

        public List<Device> devices() {
            return devices;
        }

        @Override
        public void close() {
            ControlCalls.call(freeDeviceList, array);
        }
    }

    /**
     * {@code ibv_get_device_list}. When the kernel has no RDMA subsystem it returns NULL with errno ENOSYS; that
     * becomes a {@link VerbsException} with errno 38, which callers report as "no RDMA devices".
     */
    public DeviceList deviceList() {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment count = arena.allocate(JAVA_INT);
            final MemorySegment array = ControlCalls.pointerOrThrow("ibv_get_device_list",
                ControlCalls.call(getDeviceList, count), null);
            final int n = count.get(JAVA_INT, 0);
            final MemorySegment entries = array.reinterpret(ADDRESS.byteSize() * (n + 1L));
            final List<Device> devices = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                final MemorySegment device = entries.getAtIndex(ADDRESS, i);
                devices.add(new Device(deviceName(device), device));
            }
            return new DeviceList(array, List.copyOf(devices));
        }
    }

    private String deviceName(MemorySegment device) {
        final MemorySegment name = ControlCalls.pointerOrThrow("ibv_get_device_name", ControlCalls.call(getDeviceName, device), null);
        return name.reinterpret(Long.MAX_VALUE).getString(0);
    }

    /** {@code ibv_open_device}: returns the {@code struct ibv_context *}. */
    public MemorySegment openDevice(Device device) {
        return ControlCalls.pointerOrThrow("ibv_open_device(" + device.name() + ")", ControlCalls.call(openDevice, device.pointer()),
            "is /dev/infiniband/uverbs* readable by this user?");
    }

    public void closeDevice(MemorySegment context) {
        ControlCalls.zeroOrThrow("ibv_close_device", ControlCalls.call(closeDevice, context), null);
    }

    /** What {@code ibv_query_device} reports that we use. */
    public record DeviceAttributes(int maxQpWr, int deviceCapFlags, int maxCqe, int physicalPortCount) {
    }

    public DeviceAttributes queryDevice(MemorySegment context) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment attr = arena.allocate(IbvDeviceAttr.SIZE, 8);
            ControlCalls.zeroOrThrow("ibv_query_device", ControlCalls.call(queryDevice, context, attr), null);
            return new DeviceAttributes(attr.get(JAVA_INT, IbvDeviceAttr.MAX_QP_WR_OFFSET),
                attr.get(JAVA_INT, IbvDeviceAttr.DEVICE_CAP_FLAGS_OFFSET), attr.get(JAVA_INT, IbvDeviceAttr.MAX_CQE_OFFSET),
                Byte.toUnsignedInt(attr.get(JAVA_BYTE, IbvDeviceAttr.PHYS_PORT_CNT_OFFSET)));
        }
    }

    /** What {@code ibv_query_device_ex} adds: raw-packet offload capabilities and TSO limits. */
    public record ExtendedDeviceAttributes(int rawPacketCaps, int maxTso, int tsoSupportedQpTypes) {
        public boolean ipChecksum() {
            return (rawPacketCaps & VerbsConstants.IBV_RAW_PACKET_CAP_IP_CSUM) != 0;
        }

        /** TSO is usable on raw-packet QPs when the device gives a size and lists {@code IBV_QPT_RAW_PACKET}. */
        public boolean tsoOnRawPacket() {
            return maxTso > 0 && (tsoSupportedQpTypes & (1 << VerbsConstants.IBV_QPT_RAW_PACKET)) != 0;
        }
    }

    /**
     * The inline {@code ibv_query_device_ex}: {@code vctx->query_device_ex(ctx, input, attr, sizeof attr)}, or null
     * when the provider lacks the op (verbs.h would return EOPNOTSUPP).
     */
    public ExtendedDeviceAttributes queryDeviceEx(MemorySegment context) {
        final MemorySegment op = extendedOp(context, VerbsContext.QUERY_DEVICE_EX_OFFSET);
        if (op.address() == 0) {
            return null;
        }
        final MethodHandle handle = ControlCalls.bind(op, FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, JAVA_LONG));
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment input = arena.allocate(IbvQueryDeviceExInput.SIZE, 4);
            input.set(JAVA_INT, IbvQueryDeviceExInput.COMP_MASK_OFFSET, 0);
            final MemorySegment attr = arena.allocate(IbvDeviceAttrEx.SIZE, 8);
            ControlCalls.zeroOrThrow("ibv_query_device_ex", ControlCalls.call(handle, context, input, attr, (long) IbvDeviceAttrEx.SIZE), null);
            return new ExtendedDeviceAttributes(attr.get(JAVA_INT, IbvDeviceAttrEx.RAW_PACKET_CAPS_OFFSET),
                attr.get(JAVA_INT, IbvDeviceAttrEx.TSO_CAPS_MAX_TSO_OFFSET),
                attr.get(JAVA_INT, IbvDeviceAttrEx.TSO_CAPS_SUPPORTED_QPTS_OFFSET));
        }
    }

    /** What {@code ibv_query_port} reports that we use; MTUs are {@code enum ibv_mtu} values. */
    public record PortAttributes(int state, int maxMtu, int activeMtu, int linkLayer) {
        public boolean active() {
            return state == VerbsConstants.IBV_PORT_ACTIVE;
        }

        public boolean ethernet() {
            return linkLayer == VerbsConstants.IBV_LINK_LAYER_ETHERNET;
        }
    }

    /**
     * {@code ibv_query_port}. verbs.h turns it into an inline that prefers {@code vctx->query_port} and otherwise
     * calls this exported compat symbol after zeroing the struct; the compat symbol fills the leading fields,
     * through {@code flags}, which include state, MTUs and link layer. So: zero all 52 bytes, call the export.
     */
    public PortAttributes queryPort(MemorySegment context, int port) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment attr = arena.allocate(IbvPortAttr.SIZE, 4);
            ControlCalls.zeroOrThrow("ibv_query_port(port " + port + ")", ControlCalls.call(queryPort, context, (byte) port, attr), null);
            return new PortAttributes(attr.get(JAVA_INT, IbvPortAttr.STATE_OFFSET), attr.get(JAVA_INT, IbvPortAttr.MAX_MTU_OFFSET),
                attr.get(JAVA_INT, IbvPortAttr.ACTIVE_MTU_OFFSET), Byte.toUnsignedInt(attr.get(JAVA_BYTE, IbvPortAttr.LINK_LAYER_OFFSET)));
        }
    }

    public MemorySegment allocPd(MemorySegment context) {
        return ControlCalls.pointerOrThrow("ibv_alloc_pd", ControlCalls.call(allocPd, context), null);
    }

    public void deallocPd(MemorySegment pd) {
        ControlCalls.zeroOrThrow("ibv_dealloc_pd", ControlCalls.call(deallocPd, pd), null);
    }

    /** A registered memory region: the {@code struct ibv_mr *} and its local key for SGEs and data segments. */
    public record MemoryRegion(MemorySegment pointer, int lkey) {
    }

    /**
     * {@code ibv_reg_mr(pd, addr, length, access)}. With {@code IBV_ACCESS_LOCAL_WRITE} alone the verbs.h macro
     * calls this same export (the {@code _iova2} variant is for optional access bits).
     */
    public MemoryRegion regMr(MemorySegment pd, MemorySegment region, int access) {
        final MemorySegment mr = ControlCalls.pointerOrThrow("ibv_reg_mr(" + region.byteSize() + " bytes)",
            ControlCalls.call(regMr, pd, region, region.byteSize(), access), "is RLIMIT_MEMLOCK large enough (ulimit -l)?");
        return new MemoryRegion(mr, mr.reinterpret(IbvMr.SIZE).get(JAVA_INT, IbvMr.LKEY_OFFSET));
    }

    public void deregMr(MemorySegment mr) {
        ControlCalls.zeroOrThrow("ibv_dereg_mr", ControlCalls.call(deregMr, mr), null);
    }

    /** {@code ibv_create_cq(ctx, cqe, NULL, NULL, 0)}: a polled CQ with no completion channel. */
    public MemorySegment createCq(MemorySegment context, int entries) {
        return ControlCalls.pointerOrThrow("ibv_create_cq(" + entries + " entries)",
            ControlCalls.call(createCq, context, entries, MemorySegment.NULL, MemorySegment.NULL, 0), null);
    }

    public void destroyCq(MemorySegment cq) {
        ControlCalls.zeroOrThrow("ibv_destroy_cq", ControlCalls.call(destroyCq, cq), null);
    }

    /** The sizes a queue pair asks for, and (after creation) really got. */
    public record QpCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {
    }

    /** A created queue pair: the {@code struct ibv_qp *}, its number, and the capabilities the provider granted. */
    public record QueuePair(MemorySegment pointer, int qpNum, QpCapabilities capabilities) {
    }

    /**
     * {@code ibv_create_qp} of type {@code IBV_QPT_RAW_PACKET} on one send and one receive CQ. Completions are
     * requested per work request ({@code sq_sig_all = 0}) so the link can moderate them.
     */
    public QueuePair createRawPacketQp(MemorySegment pd, MemorySegment sendCq, MemorySegment recvCq, QpCapabilities requested) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment attr = arena.allocate(IbvQpInitAttr.SIZE, 8);
            attr.set(ADDRESS, IbvQpInitAttr.SEND_CQ_OFFSET, sendCq);
            attr.set(ADDRESS, IbvQpInitAttr.RECV_CQ_OFFSET, recvCq);
            attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR_OFFSET, requested.maxSendWr());
            attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR_OFFSET, requested.maxRecvWr());
            attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE_OFFSET, requested.maxSendSge());
            attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE_OFFSET, requested.maxRecvSge());
            attr.set(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA_OFFSET, requested.maxInlineData());
            attr.set(JAVA_INT, IbvQpInitAttr.QP_TYPE_OFFSET, VerbsConstants.IBV_QPT_RAW_PACKET);
            attr.set(JAVA_INT, IbvQpInitAttr.SQ_SIG_ALL_OFFSET, 0);
            final MemorySegment qp = ControlCalls.pointerOrThrow("ibv_create_qp(IBV_QPT_RAW_PACKET)",
                ControlCalls.call(createQp, pd, attr), CAP_NET_RAW_HINT);
            final QpCapabilities granted = new QpCapabilities(attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_WR_OFFSET),
                attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_WR_OFFSET), attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_SEND_SGE_OFFSET),
                attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_RECV_SGE_OFFSET), attr.get(JAVA_INT, IbvQpInitAttr.CAP_MAX_INLINE_DATA_OFFSET));
            return new QueuePair(qp, qpNum(qp), granted);
        }
    }

    /** {@code qp->qp_num}. */
    public static int qpNum(MemorySegment qp) {
        return qp.reinterpret(IbvQp.SIZE).get(JAVA_INT, IbvQp.QP_NUM_OFFSET);
    }

    /**
     * {@code ibv_modify_qp} for a raw-packet QP's walk RESET → INIT (with the port) → RTR → RTS: such a QP has no
     * remote address, path MTU or PSNs, so state (and port for INIT) is all the attribute mask names.
     */
    public void modifyQpState(MemorySegment qp, int state, int port) {
        try (Arena arena = Arena.ofConfined()) {
            final MemorySegment attr = arena.allocate(IbvQpAttr.SIZE, 8);
            attr.set(JAVA_INT, IbvQpAttr.QP_STATE_OFFSET, state);
            int mask = VerbsConstants.IBV_QP_STATE;
            if (state == VerbsConstants.IBV_QPS_INIT) {
                attr.set(JAVA_BYTE, IbvQpAttr.PORT_NUM_OFFSET, (byte) port);
                mask |= VerbsConstants.IBV_QP_PORT;
            }
            ControlCalls.zeroOrThrow("ibv_modify_qp(state " + state + ")", ControlCalls.call(modifyQp, qp, attr, mask), null);
        }
    }

    public void destroyQp(MemorySegment qp) {
        ControlCalls.zeroOrThrow("ibv_destroy_qp", ControlCalls.call(destroyQp, qp), null);
    }

    /**
     * The inline {@code ibv_create_flow(qp, attr)}: {@code vctx->ibv_create_flow}, found through
     * {@code qp->context} as verbs.h does. Like the inline, a provider without the op fails with EOPNOTSUPP.
     */
    public MemorySegment createFlow(MemorySegment qp, MemorySegment flowAttr) {
        final MemorySegment context = qp.reinterpret(IbvQp.SIZE).get(ADDRESS, IbvQp.CONTEXT_OFFSET);
        final MemorySegment op = extendedOp(context, VerbsContext.IBV_CREATE_FLOW_OFFSET);
        if (op.address() == 0) {
            throw new VerbsException("ibv_create_flow", Errno.EOPNOTSUPP, "the provider has no flow steering");
        }
        return ControlCalls.pointerOrThrow("ibv_create_flow", ControlCalls.call(ControlCalls.bind(op, FunctionDescriptor.of(ADDRESS, ADDRESS, ADDRESS)), qp, flowAttr),
            "the device may lack managed flow steering, or the rule is not supported");
    }

    /** The inline {@code ibv_destroy_flow(flow)}: {@code vctx->ibv_destroy_flow} via {@code flow->context}; returns an errno value itself. */
    public void destroyFlow(MemorySegment flow) {
        final MemorySegment context = flow.reinterpret(IbvFlow.CONTEXT_OFFSET + 8L).get(ADDRESS, IbvFlow.CONTEXT_OFFSET);
        final MemorySegment op = extendedOp(context, VerbsContext.IBV_DESTROY_FLOW_OFFSET);
        if (op.address() == 0) {
            throw new VerbsException("ibv_destroy_flow", Errno.EOPNOTSUPP, null);
        }
        ControlCalls.zeroOrThrow("ibv_destroy_flow", ControlCalls.call(ControlCalls.bind(op, FunctionDescriptor.of(JAVA_INT, ADDRESS)), flow), null);
    }

    /**
     * verbs.h's {@code verbs_get_ctx_op(ctx, op)}: the function pointer at {@code opOffset} in the
     * {@code struct verbs_context} that precedes {@code context}, or NULL unless (1) {@code ctx->abi_compat} is
     * {@code __VERBS_ABI_IS_EXTENDED}, (2) {@code vctx->sz >= sizeof(*vctx) - opOffset} (the provider's struct
     * reaches that far), and (3) the pointer is set.
     */
    public static MemorySegment extendedOp(MemorySegment context, int opOffset) {
        final MemorySegment ctx = context.reinterpret(IbvContext.SIZE);
        if (ctx.get(JAVA_LONG, IbvContext.ABI_COMPAT_OFFSET) != VerbsContext.ABI_IS_EXTENDED) {
            return MemorySegment.NULL;
        }
        // The verbs_context starts before the pointer we hold; a segment cannot reach backwards, so rebuild one from the address.
        final MemorySegment vctx = MemorySegment.ofAddress(context.address() - VerbsContext.CONTEXT_OFFSET).reinterpret(VerbsContext.SIZE);
        final long size = vctx.get(JAVA_LONG, VerbsContext.SZ_OFFSET);
        if (Long.compareUnsigned(size, VerbsContext.SIZE - opOffset) < 0) {
            return MemorySegment.NULL;
        }
        return vctx.get(ADDRESS, opOffset);
    }
}
