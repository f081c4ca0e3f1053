package dev.tern.rawqp;

import dev.tern.core.memory.FramePool;
import dev.tern.ethernet.link.ForwardingLink;
import dev.tern.ethernet.link.FrameHolds;
import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.Offloads;
import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.rawqp.ffm.Errno;
import dev.tern.rawqp.ffm.Mlx5Dv;
import dev.tern.rawqp.ffm.NativeLibraries;
import dev.tern.rawqp.ffm.NativeLibraryException;
import dev.tern.rawqp.ffm.Verbs;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsException;
import dev.tern.rawqp.ffm.VerbsOps;
import dev.tern.rawqp.mlx5.Mlx5Rings;
import dev.tern.rawqp.mlx5.Mlx5SendWqe;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Opens rawqp links: one raw-packet queue pair (with its own device context, slab, memory region and CQs) per call,
 * so one per stack shard. The control-plane sequence:
 * <pre>
 *   ibv_get_device_list → ibv_open_device → ibv_query_device / ibv_query_port (Ethernet?) → [mlx5dv_is_supported]
 *   → ibv_query_device_ex (checksum, TSO caps) → slab: ibv_alloc_pd, ibv_reg_mr → ibv_create_cq x2
 *   → ibv_create_qp(RAW_PACKET) or mlx5dv_create_qp (TSO) → INIT(port) → [mlx5dv_init_obj] → RTR
 *   → receive buffers handed over → RTS → ibv_create_flow per steering rule
 * </pre>
 * Everything created is destroyed in reverse order if a later step fails, and by {@code Link.close()}.
 *
 * <p>Expected failures (no library, no RDMA subsystem, no such device or port, no permission) come out as a
 * {@link LinkUnavailableException} with one line naming what is missing. Bad arguments are
 * {@link IllegalArgumentException}s. Thread-safe; every call is independent.
 */
// Binding C means restricted FFM methods (reinterpret, downcalls); the JVM runs with --enable-native-access.
@SuppressWarnings("restricted")
public final class RawQpLinks {
    /** Ethernet header plus one VLAN tag: a receive buffer holds MTU plus this. */
    private static final int L2_OVERHEAD = 18;
    /** Slab buffer size with TSO: a 64 KiB TCP payload plus its headers. */
    private static final int TSO_BUFFER = 65536 + Mlx5Link.MAX_TSO_HEADER;
    /** Inline room the verbs link asks for: whole small frames go in the WQE. */
    private static final int VERBS_INLINE = 256;
    /** The reason when the JVM refuses FFM's restricted methods (run with {@code --illegal-native-access=deny}). */
    static final String NATIVE_ACCESS_DENIED = "the JVM denies native access: run it with --enable-native-access=ALL-UNNAMED (the tern launcher does)";

    private RawQpLinks() {
    }

    /**
     * Opens a link on {@code port} of RDMA device {@code device}.
     *
     * @param device  verbs device name, e.g. {@code mlx5_0} (see {@link RdmaDevices#list()})
     * @param port    port number, from 1
     * @param mac     the MAC address the stack uses (packed, see {@code MacAddress}); steering delivers frames to it
     * @param mtu     the IP MTU the stack uses; must not exceed the interface's MTU on the kernel side
     * @param options data path, queue sizes, offloads, steering
     * @return a {@link Mlx5Link} or a {@link RawQpLink}, owned by the caller's shard thread
     * @throws LinkUnavailableException when this machine cannot give such a link (one line: what is missing)
     * @throws IllegalArgumentException when an argument is malformed
     */
    public static Link open(String device, int port, long mac, int mtu, RawQpOptions options) {
        return open(device, port, mac, mtu, options, NativeLibraries.DEFAULT);
    }

    /**
     * Opens {@code shards} links on {@code port} of {@code device}, one queue pair each, for the shards of a sharded
     * stack ({@code StackShards}): shard k's queue pair gets {@link FlowRule#shardRules} for k, so the NIC steers each
     * TCP and UDP flow by the low bits of its ports ({@code ShardRule.PORT_XOR}, which the links report), and shard 0's
     * also what is not a flow (ARP, ICMP, IGMP, broadcast, later fragments). {@code options} must carry the stack's
     * IPv4 address; its own steering rules are replaced. {@code shards} is a power of two. If one cannot be opened,
     * those already open are closed and its failure thrown. Never run on hardware: no RDMA NIC was at hand.
     */
    public static Link[] openShards(String device, int port, long mac, int mtu, RawQpOptions options, int shards) {
        return openShards(device, port, mac, mtu, options, shards, NativeLibraries.DEFAULT);
    }

    static Link[] openShards(String device, int port, long mac, int mtu, RawQpOptions options, int shards,
                             NativeLibraries libraries) {
        if (shards < 1 || Integer.bitCount(shards) != 1 || shards > 128) {
            throw new IllegalArgumentException("rawqp shards steer by port bits: a power of two up to 128, got " + shards);
        }
        if (options.ipv4Address() == 0) {
            throw new IllegalArgumentException("rawqp shards need the stack's IPv4 address in the options (their flow rules match it)");
        }
        final Link[] links = new Link[shards];
        try {
            for (int k = 0; k < shards; k++) {
                final RawQpOptions shardOptions = new RawQpOptions(options.mode(), options.sendQueueSize(),
                    options.receiveQueueSize(), options.transmitBuffers(), options.completionModeration(),
                    options.checksumOffload(), options.tcpSegmentationOffload(), options.ipv4Address(),
                    FlowRule.shardRules(mac, options.ipv4Address(), k, shards));
                links[k] = new PortBitsSteered(open(device, port, mac, mtu, shardOptions, libraries));
            }
            return links;
        } catch (RuntimeException e) {
            for (Link link : links) {
                if (link != null) {
                    link.close();
                }
            }
            throw e;
        }
    }

    /** A shard's link: the NIC's flow rules steer by port bits, which the stack must know to check and pick ports. */
    private static final class PortBitsSteered extends ForwardingLink {
        PortBitsSteered(Link link) {
            super(link);
        }

        @Override
        public ShardRule shardRule() {
            return ShardRule.PORT_XOR;
        }
    }

    static Link open(String device, int port, long mac, int mtu, RawQpOptions options, NativeLibraries libraries) {
        if (device == null || device.isBlank()) {
            throw new IllegalArgumentException("RDMA device name missing (e.g. mlx5_0; tern devices lists them)");
        }
        if (port < 1 || port > 255) {
            throw new IllegalArgumentException("RDMA port must be 1..255, got " + port);
        }
        if (!MacAddress.isUnicast(mac)) {
            throw new IllegalArgumentException("link MAC must be unicast, got " + MacAddress.format(mac));
        }
        if (mtu < 68 || mtu > 9216) {
            throw new IllegalArgumentException("MTU must be 68..9216, got " + mtu);
        }
        final String link = "rawqp:" + device + ":" + port;
        try {
            return new Opening(link, device, port, mac, mtu, options, libraries).open();
        } catch (NativeLibraryException e) {
            throw new LinkUnavailableException(link, e.getMessage());
        } catch (VerbsException e) {
            throw new LinkUnavailableException(link, e.call().startsWith("ibv_get_device_list") ? RdmaDevices.noDevices(e) : e.getMessage());
        } catch (IllegalCallerException e) {
            throw new LinkUnavailableException(link, NATIVE_ACCESS_DENIED);
        }
    }

    /** One open, step by step; holds what was created so far for teardown. */
    private static final class Opening {
        private final String link;
        private final String deviceName;
        private final int port;
        private final long mac;
        private final int mtu;
        private final RawQpOptions options;
        private final NativeLibraries libraries;
        private final Teardown teardown = new Teardown();
        private boolean slabHandedOver;
        private Link built;

        Opening(String link, String deviceName, int port, long mac, int mtu, RawQpOptions options, NativeLibraries libraries) {
            this.link = link;
            this.deviceName = deviceName;
            this.port = port;
            this.mac = mac;
            this.mtu = mtu;
            this.options = options;
            this.libraries = libraries;
        }

        Link open() {
            final Verbs verbs = Verbs.load(libraries);
            try {
                return open(verbs);
            } catch (RuntimeException e) {
                teardown.closeAfterFailure(e);
                if (built != null) {
                    // Opening failed after the link was built (RTS, a flow rule): with the QP gone, closing the
                    // unattached link frees only its own memory and the slab.
                    try {
                        built.close();
                    } catch (RuntimeException closing) {
                        e.addSuppressed(closing);
                    }
                }
                throw e;
            }
        }

        private Link open(Verbs verbs) {
            final MemorySegment context;
            final Mlx5Dv mlx5;
            try (Verbs.DeviceList list = verbs.deviceList()) {
                final Verbs.Device device = find(list.devices());
                mlx5 = directVerbs(device);
                context = verbs.openDevice(device);
            }
            teardown.add(() -> verbs.closeDevice(context));

            final Verbs.DeviceAttributes device = verbs.queryDevice(context);
            if (port > device.physicalPortCount()) {
                throw unavailable("port " + port + " does not exist (" + deviceName + " has " + device.physicalPortCount() + ")");
            }
            final Verbs.PortAttributes portAttributes = verbs.queryPort(context, port);
            if (!portAttributes.ethernet()) {
                throw unavailable("port " + port + " of " + deviceName + " is " + VerbsConstants.linkLayerName(portAttributes.linkLayer())
                    + ", not Ethernet: raw-packet QPs need an Ethernet (RoCE) port");
            }
            if (!portAttributes.active()) {
                throw unavailable("port " + port + " of " + deviceName + " is " + VerbsConstants.portStateName(portAttributes.state())
                    + ", not ACTIVE (is the cable in and the interface up?)");
            }
            final Verbs.ExtendedDeviceAttributes extended = extendedAttributes(verbs, context);
            final boolean checksums = options.checksumOffload() && (extended != null
                ? extended.ipChecksum() : (device.deviceCapFlags() & VerbsConstants.IBV_DEVICE_RAW_IP_CSUM) != 0);
            final boolean tso = mlx5 != null && options.tcpSegmentationOffload() && extended != null && extended.tsoOnRawPacket();
            int offloads = checksums ? Offloads.TX_IPV4_CHECKSUM | Offloads.TX_L4_CHECKSUM | Offloads.RX_CHECKSUM : 0;
            if (tso) {
                offloads |= Offloads.TX_TCP_SEGMENTATION;
            }

            // As many buffers more as the link lends at once: they replace frames lent to the stack (held-frame
            // receive, QueuePairLink.lendFrame), so lending never takes transmit's.
            final FramePool pool = FramePool.allocate(options.receiveQueueSize()
                + FrameHolds.lendLimit(options.receiveQueueSize()) + options.transmitBuffers(),
                tso ? TSO_BUFFER : mtu + L2_OVERHEAD);
            // The link owns the slab once it exists and frees it after this teardown has deregistered it.
            teardown.add(() -> {
                if (!slabHandedOver) {
                    pool.close();
                }
            });
            final MemorySegment pd = verbs.allocPd(context);
            teardown.add(() -> verbs.deallocPd(pd));
            final Verbs.MemoryRegion mr = verbs.regMr(pd, pool.slab(), VerbsConstants.IBV_ACCESS_LOCAL_WRITE);
            teardown.add(() -> verbs.deregMr(mr.pointer()));
            final MemorySegment sendCq = verbs.createCq(context, options.sendQueueSize());
            teardown.add(() -> verbs.destroyCq(sendCq));
            final MemorySegment recvCq = verbs.createCq(context, options.receiveQueueSize());
            teardown.add(() -> verbs.destroyCq(recvCq));

            // DV builds its own WQEs and only needs libmlx5 to size the SQ for the headers it inlines; verbs asks for room
            // to inline small frames whole (ARP, ACKs, small UDP), which saves the device a DMA read per frame.
            final int inline = mlx5 != null ? (tso ? Mlx5Link.MAX_TSO_HEADER : Mlx5SendWqe.MIN_INLINE_HEADER_SIZE) : VERBS_INLINE;
            final Verbs.QpCapabilities wanted = new Verbs.QpCapabilities(options.sendQueueSize(), options.receiveQueueSize(), 1, 1, inline);
            final Verbs.QueuePair qp = tso
                ? mlx5.createRawPacketQp(context, pd, sendCq, recvCq, wanted, Mlx5Link.MAX_TSO_HEADER)
                : createQp(verbs, pd, sendCq, recvCq, wanted);
            teardown.add(() -> verbs.destroyQp(qp.pointer()));
            verbs.modifyQpState(qp.pointer(), VerbsConstants.IBV_QPS_INIT, port);

            final Link result;
            if (mlx5 != null) {
                final Mlx5Rings rings = rings(mlx5, qp, sendCq, recvCq);
                verbs.modifyQpState(qp.pointer(), VerbsConstants.IBV_QPS_RTR, port);
                final Mlx5Link mlx5Link = new Mlx5Link(link, mac, mtu, offloads, pool, mr.lkey(), rings, options.completionModeration(), 0);
                slabHandedOver = true;
                built = mlx5Link;
                mlx5Link.armReceiveQueue();
                verbs.modifyQpState(qp.pointer(), VerbsConstants.IBV_QPS_RTS, port);
                mlx5Link.attach(steering(verbs, qp.pointer()), teardown);
                result = mlx5Link;
            } else {
                final RawQpLink verbsLink = new RawQpLink(link, mac, mtu, offloads, pool, mr.lkey(),
                    VerbsOps.of(qp.pointer(), sendCq, recvCq, true), options.sendQueueSize(), options.receiveQueueSize(),
                    qp.capabilities().maxInlineData(), options.completionModeration());
                slabHandedOver = true;
                built = verbsLink;
                verbs.modifyQpState(qp.pointer(), VerbsConstants.IBV_QPS_RTR, port);
                verbsLink.postAllReceives();
                verbs.modifyQpState(qp.pointer(), VerbsConstants.IBV_QPS_RTS, port);
                verbsLink.attach(steering(verbs, qp.pointer()), teardown);
                result = verbsLink;
            }
            return result;
        }

        /**
         * {@code ibv_create_qp}, asking for inline room; a provider whose limit is lower refuses with EINVAL, and then
         * we ask again without inline data (the verbs link then simply never sets {@code IBV_SEND_INLINE}).
         */
        private static Verbs.QueuePair createQp(Verbs verbs, MemorySegment pd, MemorySegment sendCq, MemorySegment recvCq,
                                                Verbs.QpCapabilities wanted) {
            try {
                return verbs.createRawPacketQp(pd, sendCq, recvCq, wanted);
            } catch (VerbsException e) {
                if (e.errno() != Errno.EINVAL || wanted.maxInlineData() == 0) {
                    throw e;
                }
                return verbs.createRawPacketQp(pd, sendCq, recvCq,
                    new Verbs.QpCapabilities(wanted.maxSendWr(), wanted.maxRecvWr(), wanted.maxSendSge(), wanted.maxRecvSge(), 0));
            }
        }

        /** {@code ibv_query_device_ex}, or null where the provider lacks it: we then fall back to the basic capability flags. */
        private static Verbs.ExtendedDeviceAttributes extendedAttributes(Verbs verbs, MemorySegment context) {
            try {
                return verbs.queryDeviceEx(context);
            } catch (VerbsException e) {
                return null;
            }
        }

        private Verbs.Device find(List<Verbs.Device> devices) {
            if (devices.isEmpty()) {
                throw unavailable("no RDMA devices: ibv_get_device_list returned none (no device, or no provider library for it)");
            }
            for (Verbs.Device device : devices) {
                if (device.name().equals(deviceName)) {
                    return device;
                }
            }
            throw unavailable("no RDMA device named " + deviceName + " (found: "
                + devices.stream().map(Verbs.Device::name).collect(Collectors.joining(", ")) + ")");
        }

        /** libmlx5 for {@link RawQpOptions.Mode#DIRECT_VERBS} and (when it fits) AUTO; null for plain verbs. */
        private Mlx5Dv directVerbs(Verbs.Device device) {
            if (options.mode() == RawQpOptions.Mode.VERBS) {
                return null;
            }
            final Mlx5Dv mlx5;
            try {
                mlx5 = Mlx5Dv.load(libraries);
            } catch (NativeLibraryException e) {
                if (options.mode() == RawQpOptions.Mode.AUTO) {
                    return null;
                }
                throw e;
            }
            if (mlx5.isSupported(device)) {
                return mlx5;
            }
            if (options.mode() == RawQpOptions.Mode.AUTO) {
                return null;
            }
            throw unavailable("mlx5 direct verbs need an mlx5 device, and " + deviceName
                + " is not one (mlx5dv_is_supported returned false); use mode VERBS");
        }

        /** The rings libmlx5 set up, as segments of the sizes it reports. */
        private static Mlx5Rings rings(Mlx5Dv mlx5, Verbs.QueuePair qp, MemorySegment sendCq, MemorySegment recvCq) {
            final Mlx5Dv.QpRings q = mlx5.initQp(qp.pointer());
            if (q.sqStride() != Mlx5SendWqe.BASIC_BLOCK_SIZE) {
                throw new VerbsException("mlx5dv_init_obj", 0, "unexpected sq.stride " + q.sqStride() + " (expected 64)");
            }
            final Mlx5Dv.CqRing s = mlx5.initCq(sendCq);
            final Mlx5Dv.CqRing r = mlx5.initCq(recvCq);
            return new Mlx5Rings(qp.qpNum(),
                memory(q.sqBuffer(), (long) q.sqWqeCount() * q.sqStride()), q.sqWqeCount(),
                memory(q.rqBuffer(), (long) q.rqWqeCount() * q.rqStride()), q.rqWqeCount(), q.rqStride(),
                memory(q.doorbellRecord(), 8), memory(q.blueFlameRegister(), 8),
                new Mlx5Rings.Cq(memory(s.buffer(), (long) s.cqeCount() * s.cqeSize()), s.cqeCount(), s.cqeSize(), memory(s.doorbellRecord(), 4)),
                new Mlx5Rings.Cq(memory(r.buffer(), (long) r.cqeCount() * r.cqeSize()), r.cqeCount(), r.cqeSize(), memory(r.doorbellRecord(), 4)));
        }

        private static MemorySegment memory(long address, long size) {
            return MemorySegment.ofAddress(address).reinterpret(size);
        }

        /** Installs the steering rules with {@code ibv_create_flow} on {@code qp}. */
        private FlowTable steering(Verbs verbs, MemorySegment qp) {
            return new FlowTable(new FlowTable.Installer() {
                @Override
                public long install(FlowRule rule) {
                    try (Arena arena = Arena.ofConfined()) {
                        return verbs.createFlow(qp, rule.encode(arena, port)).address();
                    }
                }

                @Override
                public void remove(long handle) {
                    verbs.destroyFlow(MemorySegment.ofAddress(handle));
                }
            }, options.steeringFor(mac), options.steersByAddress());
        }

        private LinkUnavailableException unavailable(String reason) {
            return new LinkUnavailableException(link, reason);
        }
    }
}
