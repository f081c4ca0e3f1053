package dev.tern.rawqp;

import dev.tern.ethernet.wire.MacAddress;

import java.util.List;

/**
 * How {@link RawQpLinks#open} builds a link. Start from {@link #defaults()} or {@link #builder()}.
 *
 * @param mode                   which data path: mlx5 direct verbs, plain verbs, or direct verbs when the device
 *                               supports it ({@link Mode#AUTO})
 * @param sendQueueSize          send work requests the QP holds (a power of two, 64..32768)
 * @param receiveQueueSize       receive buffers posted at all times (a power of two, 64..32768)
 * @param transmitBuffers        frame buffers for transmit, in the same registered slab as the receive buffers
 * @param completionModeration   ask for a send completion every this many frames (1..sendQueueSize/4); buffers are
 *                               reclaimed in batches of this size, and up to this many minus one wait when idle
 * @param checksumOffload        let the NIC compute IPv4/TCP/UDP checksums and report verified ones, when the
 *                               device can
 * @param tcpSegmentationOffload accept TCP frames up to 64 KiB and let the NIC cut them (mlx5 direct verbs only,
 *                               when the device reports TSO for raw-packet QPs); makes every slab buffer 64 KiB
 * @param ipv4Address            the stack's IPv4 address, or 0: with an address and no explicit {@code steering},
 *                               the link steers by address ({@link #steersByAddress}): IPv4 to that address, ARP to
 *                               our MAC and broadcast, IPv6 to each IPv6 address the stack adds, and leaves other
 *                               traffic to our MAC (the kernel's IPv6, LLDP) to the kernel; IPv6 groups' rules then
 *                               let the kernel have their frames too. Without one, everything to our MAC and
 *                               broadcast
 * @param steering               explicit flow rules, replacing the defaults above. Shards of one stack sharing a
 *                               MAC pass disjoint rules (see {@link FlowRule#sourcePortShard}). Multicast MACs are
 *                               added by {@code Link.addMulticast} either way.
 */
public record RawQpOptions(Mode mode, int sendQueueSize, int receiveQueueSize, int transmitBuffers, int completionModeration,
                           boolean checksumOffload, boolean tcpSegmentationOffload, int ipv4Address, List<FlowRule> steering) {
    /** The data path. */
    public enum Mode {
        /** mlx5 direct verbs when libmlx5 supports the device, else plain verbs. */
        AUTO,
        /** {@code Mlx5Link}: WQEs and CQEs built and parsed in Java, doorbells rung by plain stores. */
        DIRECT_VERBS,
        /** {@code RawQpLink}: {@code ibv_post_send}/{@code ibv_post_recv}/{@code ibv_poll_cq} through the provider. */
        VERBS
    }

    static final int MIN_QUEUE = 64;
    static final int MAX_QUEUE = 32768;
    private static final int ETHER_TYPE_ARP = 0x0806;

    public RawQpOptions {
        if (mode == null) {
            throw new IllegalArgumentException("mode missing");
        }
        checkQueue("sendQueueSize", sendQueueSize);
        checkQueue("receiveQueueSize", receiveQueueSize);
        if (completionModeration < 1 || completionModeration > sendQueueSize / 4) {
            throw new IllegalArgumentException("completionModeration must be 1.." + sendQueueSize / 4 + " (sendQueueSize / 4), got "
                + completionModeration);
        }
        if (transmitBuffers < 2 * completionModeration || transmitBuffers > 1 << 20) {
            throw new IllegalArgumentException("transmitBuffers must be " + 2 * completionModeration
                + " (twice the completion moderation) .. 1048576, got " + transmitBuffers);
        }
        steering = List.copyOf(steering);
    }

    private static void checkQueue(String name, int size) {
        if (size < MIN_QUEUE || size > MAX_QUEUE || Integer.bitCount(size) != 1) {
            throw new IllegalArgumentException(name + " must be a power of two in " + MIN_QUEUE + ".." + MAX_QUEUE + ", got " + size);
        }
    }

    /** The rules a link installs at open: {@link #steering()} if given, else the defaults described at {@link #ipv4Address()}. */
    public List<FlowRule> steeringFor(long mac) {
        if (!steering.isEmpty()) {
            return steering;
        }
        if (ipv4Address != 0) {
            return List.of(FlowRule.ipv4(mac, ipv4Address), FlowRule.etherType(mac, ETHER_TYPE_ARP), FlowRule.destinationMac(MacAddress.BROADCAST));
        }
        return List.of(FlowRule.destinationMac(mac), FlowRule.destinationMac(MacAddress.BROADCAST));
    }

    /**
     * Whether the default rules steer by address ({@link #ipv4Address()} given, no explicit steering): the kernel keeps
     * the MAC and what the rules leave it, so IPv6 addresses of ours get rules of their own as the stack adds them.
     */
    public boolean steersByAddress() {
        return steering.isEmpty() && ipv4Address != 0;
    }

    /** AUTO mode, 1024-entry queues, 1024 transmit buffers, a send completion every 32 frames, checksum offload on, no TSO. */
    public static RawQpOptions defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder starting from the defaults. */
    public static final class Builder {
        private Mode mode = Mode.AUTO;
        private int sendQueueSize = 1024;
        private int receiveQueueSize = 1024;
        private int transmitBuffers = 1024;
        private int completionModeration = 32;
        private boolean checksumOffload = true;
        private boolean tcpSegmentationOffload;
        private int ipv4Address;
        private List<FlowRule> steering = List.of();

        private Builder() {
        }

        public Builder mode(Mode value) {
            mode = value;
            return this;
        }

        public Builder sendQueueSize(int value) {
            sendQueueSize = value;
            return this;
        }

        public Builder receiveQueueSize(int value) {
            receiveQueueSize = value;
            return this;
        }

        public Builder transmitBuffers(int value) {
            transmitBuffers = value;
            return this;
        }

        public Builder completionModeration(int value) {
            completionModeration = value;
            return this;
        }

        public Builder checksumOffload(boolean value) {
            checksumOffload = value;
            return this;
        }

        public Builder tcpSegmentationOffload(boolean value) {
            tcpSegmentationOffload = value;
            return this;
        }

        /** The stack's IPv4 address (e.g. 0xC6120002 for 198.18.0.2), for the default steering rules. */
        public Builder ipv4Address(int value) {
            ipv4Address = value;
            return this;
        }

        public Builder steering(List<FlowRule> value) {
            steering = value;
            return this;
        }

        public RawQpOptions build() {
            return new RawQpOptions(mode, sendQueueSize, receiveQueueSize, transmitBuffers, completionModeration, checksumOffload,
                tcpSegmentationOffload, ipv4Address, steering);
        }
    }
}
