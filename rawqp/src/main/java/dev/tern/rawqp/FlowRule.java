package dev.tern.rawqp;

import dev.tern.core.memory.BigEndian;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.rawqp.ffm.VerbsConstants;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlowAttr;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlowSpecEth;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlowSpecIpv4;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlowSpecIpv6;
import dev.tern.rawqp.ffm.VerbsLayouts.IbvFlowSpecTcpUdp;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

/**
 * A flow-steering rule: which received frames the NIC delivers to a link's queue pair ({@code ibv_create_flow}).
 * A frame that matches no rule of any QP goes to the kernel's own network interface, not to us.
 *
 * <p>Matches are exact on the destination MAC, and optionally on EtherType, IPv4 destination, IP protocol (TCP or
 * UDP) and ports under a mask. Port masks let shards split one address between QPs without RSS:
 * {@code FlowRule.tcp(mac, ip, 80).sourcePortShard(i, 4)} steers a quarter of the connections (source port mod 4
 * == i) to shard {@code i}.
 *
 * <p>Encoded as {@code struct ibv_flow_attr} followed directly by its specs (eth, then ipv4 or ipv6, then tcp/udp), each
 * spec's {@code size} being its sizeof; all match fields in network byte order:
 * <pre>
 *   0              20                   60                84                  100
 *   +--------------+--------------------+-----------------+-------------------+
 *   | ibv_flow_attr| ibv_flow_spec_eth  | ibv_flow_spec_ipv4| ibv_flow_spec_tcp_udp |
 *   +--------------+--------------------+-----------------+-------------------+
 * </pre>
 *
 * @param destinationMac  destination MAC, matched exactly
 * @param etherType       EtherType to match, or 0 for any (set to IPv4 automatically when an IPv4 match follows)
 * @param destinationIpv4 IPv4 destination to match exactly, or 0 for any
 * @param ipProtocol      {@link #TCP}, {@link #UDP}, or 0 for no L4 match
 * @param destinationPort L4 destination port (used under {@code destinationPortMask})
 * @param destinationPortMask bits of the destination port to compare, 0 for any
 * @param sourcePort      L4 source port (used under {@code sourcePortMask})
 * @param sourcePortMask  bits of the source port to compare, 0 for any
 * @param priority        {@code ibv_flow_attr.priority}: lower values win when rules overlap
 * @param destinationIpv6High IPv6 destination to match exactly, high 64 bits (with the low ones: both 0 for none;
 *                        an IPv6 match replaces the IPv4 one, and the EtherType is then IPv6's)
 * @param destinationIpv6Low  its low 64 bits
 * @param dontTrap        {@code IBV_FLOW_ATTR_FLAGS_DONT_TRAP}: a matching frame also goes on to the rules below and
 *                        the kernel (for multicast both sides need, such as IPv6's all-nodes and solicited-node groups)
 */
public record FlowRule(long destinationMac, int etherType, int destinationIpv4, int ipProtocol, int destinationPort,
                       int destinationPortMask, int sourcePort, int sourcePortMask, int priority,
                       long destinationIpv6High, long destinationIpv6Low, boolean dontTrap) {
    public static final int TCP = 6;
    public static final int UDP = 17;
    private static final int ETHER_TYPE_IPV4 = 0x0800;
    private static final int ETHER_TYPE_IPV6 = 0x86DD;

    public FlowRule {
        if (ipProtocol != 0 && ipProtocol != TCP && ipProtocol != UDP) {
            throw new IllegalArgumentException("flow rules match TCP (6) or UDP (17), not IP protocol " + ipProtocol);
        }
        if ((destinationPort | destinationPortMask | sourcePort | sourcePortMask) >>> 16 != 0) {
            throw new IllegalArgumentException("ports and port masks are 16-bit values");
        }
        if (ipProtocol == 0 && (destinationPortMask | sourcePortMask) != 0) {
            throw new IllegalArgumentException("a port match needs ipProtocol TCP or UDP");
        }
        if (priority >>> 16 != 0) {
            throw new IllegalArgumentException("flow priority is a 16-bit value, got " + priority);
        }
        if ((destinationIpv6High | destinationIpv6Low) != 0 && destinationIpv4 != 0) {
            throw new IllegalArgumentException("a rule matches an IPv4 or an IPv6 destination, not both");
        }
    }

    /** Every frame addressed to {@code mac} (unicast, broadcast or a multicast group). */
    public static FlowRule destinationMac(long mac) {
        return new FlowRule(mac, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, false);
    }

    /** Frames to {@code mac} of one EtherType (ARP is 0x0806). */
    public static FlowRule etherType(long mac, int etherType) {
        return new FlowRule(mac, etherType, 0, 0, 0, 0, 0, 0, 0, 0, 0, false);
    }

    /** IPv4 frames to {@code mac} and {@code address}. */
    public static FlowRule ipv4(long mac, int address) {
        return new FlowRule(mac, ETHER_TYPE_IPV4, address, 0, 0, 0, 0, 0, 0, 0, 0, false);
    }

    /**
     * IPv6 frames to {@code mac} and the address ({@code high}, {@code low}), where the kernel keeps the MAC: what
     * {@code Link.addIpv6Address} installs on a link that steers by address.
     */
    public static FlowRule ipv6(long mac, long high, long low) {
        if ((high | low) == 0) {
            throw new IllegalArgumentException("an IPv6 rule needs an address");
        }
        return new FlowRule(mac, ETHER_TYPE_IPV6, 0, 0, 0, 0, 0, 0, 0, high, low, false);
    }

    /** This rule, letting a matching frame go on to the kernel as well ({@code IBV_FLOW_ATTR_FLAGS_DONT_TRAP}). */
    public FlowRule withoutTrapping() {
        return new FlowRule(destinationMac, etherType, destinationIpv4, ipProtocol, destinationPort, destinationPortMask,
            sourcePort, sourcePortMask, priority, destinationIpv6High, destinationIpv6Low, true);
    }

    /** TCP segments to {@code mac}, {@code address}, {@code port}. */
    public static FlowRule tcp(long mac, int address, int port) {
        return new FlowRule(mac, ETHER_TYPE_IPV4, address, TCP, port, 0xFFFF, 0, 0, 0, 0, 0, false);
    }

    /** UDP datagrams to {@code mac}, {@code address}, {@code port}. */
    public static FlowRule udp(long mac, int address, int port) {
        return new FlowRule(mac, ETHER_TYPE_IPV4, address, UDP, port, 0xFFFF, 0, 0, 0, 0, 0, false);
    }

    /** This rule restricted to source ports whose low bits equal {@code shard}; {@code shards} is a power of two. */
    public FlowRule sourcePortShard(int shard, int shards) {
        if (shards <= 0 || Integer.bitCount(shards) != 1 || shards > 1 << 16 || shard < 0 || shard >= shards) {
            throw new IllegalArgumentException("shard " + shard + " of " + shards + ": need 0 <= shard < shards, shards a power of two");
        }
        return new FlowRule(destinationMac, etherType, destinationIpv4, ipProtocol, destinationPort, destinationPortMask, shard,
            shards - 1, priority, destinationIpv6High, destinationIpv6Low, dontTrap);
    }

    /**
     * The rules that steer to shard {@code shard} of {@code shards} (a power of two) what {@code ShardRule.PORT_XOR}
     * gives it: for TCP and UDP to {@code mac} and {@code address}, one rule per pair of low port bits whose XOR is
     * {@code shard} ({@code shards} rules per protocol, each an exact match of both ports' low bits under the mask
     * {@code shards - 1}, priority 0). Shard 0 also takes, at priority 1, the rest of what a stack of one link would:
     * every other IPv4 packet to {@code address} (ICMP, IGMP, fragments after the first, which carry no ports), ARP to
     * our MAC, and broadcast. A first fragment carries ports and so may reach another shard; that shard's filter hands
     * it to shard 0, where fragments are reassembled. Multicast MACs are added to shard 0's link as groups are joined.
     */
    public static List<FlowRule> shardRules(long mac, int address, int shard, int shards) {
        if (shards < 1 || Integer.bitCount(shards) != 1 || shards > 1 << 16 || shard < 0 || shard >= shards) {
            throw new IllegalArgumentException("shard " + shard + " of " + shards + ": need 0 <= shard < shards, shards a power of two");
        }
        if (address == 0) {
            throw new IllegalArgumentException("shard rules need the stack's IPv4 address");
        }
        final int mask = shards - 1;
        final List<FlowRule> rules = new ArrayList<>();
        if (shards > 1) {
            for (int protocol : new int[] {TCP, UDP}) {
                for (int sourceBits = 0; sourceBits < shards; sourceBits++) {
                    rules.add(new FlowRule(mac, ETHER_TYPE_IPV4, address, protocol, sourceBits ^ shard, mask, sourceBits, mask, 0,
                        0, 0, false));
                }
            }
        }
        if (shard == 0) {
            rules.add(ipv4(mac, address).withPriority(1));
            rules.add(etherType(mac, 0x0806).withPriority(1));
            rules.add(destinationMac(MacAddress.BROADCAST).withPriority(1));
        }
        return List.copyOf(rules);
    }

    public FlowRule withPriority(int value) {
        return new FlowRule(destinationMac, etherType, destinationIpv4, ipProtocol, destinationPort, destinationPortMask, sourcePort,
            sourcePortMask, value, destinationIpv6High, destinationIpv6Low, dontTrap);
    }

    private boolean hasIpv6Spec() {
        return (destinationIpv6High | destinationIpv6Low) != 0;
    }

    private boolean hasIpv4Spec() {
        return !hasIpv6Spec() && (destinationIpv4 != 0 || ipProtocol != 0);
    }

    public int specCount() {
        return 1 + (hasIpv4Spec() || hasIpv6Spec() ? 1 : 0) + (ipProtocol != 0 ? 1 : 0);
    }

    /** Bytes of {@code ibv_flow_attr} plus specs. */
    public int encodedSize() {
        return IbvFlowAttr.SIZE + IbvFlowSpecEth.SIZE + (hasIpv4Spec() ? IbvFlowSpecIpv4.SIZE : 0)
            + (hasIpv6Spec() ? IbvFlowSpecIpv6.SIZE : 0) + (ipProtocol != 0 ? IbvFlowSpecTcpUdp.SIZE : 0);
    }

    /** The rule as {@code ibv_create_flow} takes it, for {@code port}, in memory from {@code arena}. */
    public MemorySegment encode(Arena arena, int port) {
        final MemorySegment out = arena.allocate(encodedSize(), 8);
        encode(out, port);
        return out;
    }

    /** Writes every byte of the encoded rule into {@code out} (at least {@link #encodedSize()} bytes). */
    public void encode(MemorySegment out, int port) {
        out.asSlice(0, encodedSize()).fill((byte) 0);
        // Host byte order: ibv_flow_attr and the spec headers are plain C integers; only match values are big-endian.
        out.set(ValueLayout.JAVA_INT_UNALIGNED, IbvFlowAttr.TYPE_OFFSET, VerbsConstants.IBV_FLOW_ATTR_NORMAL);
        out.set(ValueLayout.JAVA_SHORT_UNALIGNED, IbvFlowAttr.SIZE_OFFSET, (short) encodedSize());
        out.set(ValueLayout.JAVA_SHORT_UNALIGNED, IbvFlowAttr.PRIORITY_OFFSET, (short) priority);
        out.set(ValueLayout.JAVA_BYTE, IbvFlowAttr.NUM_OF_SPECS_OFFSET, (byte) specCount());
        out.set(ValueLayout.JAVA_BYTE, IbvFlowAttr.PORT_OFFSET, (byte) port);
        out.set(ValueLayout.JAVA_INT_UNALIGNED, IbvFlowAttr.FLAGS_OFFSET,
            dontTrap ? VerbsConstants.IBV_FLOW_ATTR_FLAGS_DONT_TRAP : 0);
        long spec = IbvFlowAttr.SIZE;

        specHeader(out, spec + IbvFlowSpecEth.TYPE_OFFSET, VerbsConstants.IBV_FLOW_SPEC_ETH, spec + IbvFlowSpecEth.SIZE_OFFSET,
            IbvFlowSpecEth.SIZE);
        final long ethValue = spec + IbvFlowSpecEth.VAL_OFFSET;
        final long ethMask = spec + IbvFlowSpecEth.MASK_OFFSET;
        BigEndian.u48(out, ethValue + IbvFlowSpecEth.FILTER_DST_MAC_OFFSET, destinationMac);
        BigEndian.u48(out, ethMask + IbvFlowSpecEth.FILTER_DST_MAC_OFFSET, MacAddress.BROADCAST);
        final int type = hasIpv6Spec() ? ETHER_TYPE_IPV6 : hasIpv4Spec() && etherType == 0 ? ETHER_TYPE_IPV4 : etherType;
        if (type != 0) {
            BigEndian.u16(out, ethValue + IbvFlowSpecEth.FILTER_ETHER_TYPE_OFFSET, type);
            BigEndian.u16(out, ethMask + IbvFlowSpecEth.FILTER_ETHER_TYPE_OFFSET, 0xFFFF);
        }
        spec += IbvFlowSpecEth.SIZE;

        if (hasIpv4Spec()) {
            specHeader(out, spec + IbvFlowSpecIpv4.TYPE_OFFSET, VerbsConstants.IBV_FLOW_SPEC_IPV4, spec + IbvFlowSpecIpv4.SIZE_OFFSET,
                IbvFlowSpecIpv4.SIZE);
            if (destinationIpv4 != 0) {
                BigEndian.i32(out, spec + IbvFlowSpecIpv4.VAL_OFFSET + IbvFlowSpecIpv4.FILTER_DST_IP_OFFSET, destinationIpv4);
                BigEndian.i32(out, spec + IbvFlowSpecIpv4.MASK_OFFSET + IbvFlowSpecIpv4.FILTER_DST_IP_OFFSET, -1);
            }
            spec += IbvFlowSpecIpv4.SIZE;
        }

        if (hasIpv6Spec()) {
            specHeader(out, spec + IbvFlowSpecIpv6.TYPE_OFFSET, VerbsConstants.IBV_FLOW_SPEC_IPV6, spec + IbvFlowSpecIpv6.SIZE_OFFSET,
                IbvFlowSpecIpv6.SIZE);
            final long value = spec + IbvFlowSpecIpv6.VAL_OFFSET + IbvFlowSpecIpv6.FILTER_DST_IP_OFFSET;
            final long mask = spec + IbvFlowSpecIpv6.MASK_OFFSET + IbvFlowSpecIpv6.FILTER_DST_IP_OFFSET;
            BigEndian.i64(out, value, destinationIpv6High);
            BigEndian.i64(out, value + 8, destinationIpv6Low);
            BigEndian.i64(out, mask, -1L);
            BigEndian.i64(out, mask + 8, -1L);
            spec += IbvFlowSpecIpv6.SIZE;
        }

        if (ipProtocol != 0) {
            specHeader(out, spec + IbvFlowSpecTcpUdp.TYPE_OFFSET,
                ipProtocol == TCP ? VerbsConstants.IBV_FLOW_SPEC_TCP : VerbsConstants.IBV_FLOW_SPEC_UDP,
                spec + IbvFlowSpecTcpUdp.SIZE_OFFSET, IbvFlowSpecTcpUdp.SIZE);
            final long value = spec + IbvFlowSpecTcpUdp.VAL_OFFSET;
            final long mask = spec + IbvFlowSpecTcpUdp.MASK_OFFSET;
            BigEndian.u16(out, value + IbvFlowSpecTcpUdp.FILTER_DST_PORT_OFFSET, destinationPort & destinationPortMask);
            BigEndian.u16(out, mask + IbvFlowSpecTcpUdp.FILTER_DST_PORT_OFFSET, destinationPortMask);
            BigEndian.u16(out, value + IbvFlowSpecTcpUdp.FILTER_SRC_PORT_OFFSET, sourcePort & sourcePortMask);
            BigEndian.u16(out, mask + IbvFlowSpecTcpUdp.FILTER_SRC_PORT_OFFSET, sourcePortMask);
        }
    }

    /** Every spec starts with its {@code enum ibv_flow_spec_type} and its 16-bit size (host byte order). */
    private static void specHeader(MemorySegment out, long typeAt, int type, long sizeAt, int size) {
        out.set(ValueLayout.JAVA_INT_UNALIGNED, typeAt, type);
        out.set(ValueLayout.JAVA_SHORT_UNALIGNED, sizeAt, (short) size);
    }

    @Override
    public String toString() {
        final StringBuilder text = new StringBuilder("dst ").append(MacAddress.format(destinationMac));
        if (etherType != 0) {
            text.append(" type 0x").append(Integer.toHexString(etherType));
        }
        if (hasIpv6Spec()) {
            text.append(" ip6 ").append(new dev.tern.core.net.Ipv6Address(destinationIpv6High, destinationIpv6Low));
        }
        if (destinationIpv4 != 0) {
            text.append(" ip ").append(destinationIpv4 >>> 24).append('.').append(destinationIpv4 >>> 16 & 0xFF).append('.')
                .append(destinationIpv4 >>> 8 & 0xFF).append('.').append(destinationIpv4 & 0xFF);
        }
        if (ipProtocol != 0) {
            text.append(ipProtocol == TCP ? " tcp" : " udp");
            if (destinationPortMask != 0) {
                text.append(" dport ").append(destinationPort).append('/').append(Integer.toHexString(destinationPortMask));
            }
            if (sourcePortMask != 0) {
                text.append(" sport ").append(sourcePort).append('/').append(Integer.toHexString(sourcePortMask));
            }
        }
        return text.append(" prio ").append(priority).append(dontTrap ? " no-trap" : "").toString();
    }
}
