package dev.tern.rawqp;

import dev.tern.ethernet.link.ShardRule;
import dev.tern.ethernet.link.ShardSteering;
import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The flow rules of rawqp shards ({@link FlowRule#shardRules}) against a model of a NIC's flow steering: a frame goes
 * to the queue pair of the matching rule of lowest priority value (exact fields, port bits under masks; a fragment
 * after the first has no ports to match), to the kernel when none matches. On arbitrary frames the NIC must put every
 * frame where {@link ShardSteering} with {@link ShardRule#PORT_XOR} says the stack serves it, never two queue pairs at
 * one priority, and nothing of another host's to us. No NIC ran these rules: the model is the test.
 */
class FlowRuleShardsTest {
    private static final long MAC = 0x0200_0000_0002L;
    private static final long PEER_MAC = 0x0200_0000_0001L;
    private static final long OTHER_MAC = 0x0200_0000_0009L;
    private static final int ADDRESS = 0xC612_0002;
    private static final int PEER = 0xC612_0001;

    private record Installed(int queuePair, FlowRule rule) {
    }

    /** Where the modelled NIC delivers {@code frame}: a queue pair, or -1 for the kernel. */
    private static int steer(List<Installed> rules, byte[] frame) {
        final ByteBuffer b = ByteBuffer.wrap(frame);
        final long destinationMac = (b.getInt(0) & 0xFFFF_FFFFL) << 16 | (b.getShort(4) & 0xFFFF);
        final int etherType = b.getShort(12) & 0xFFFF;
        int best = Integer.MAX_VALUE;
        int chosen = -1;
        for (Installed installed : rules) {
            final FlowRule rule = installed.rule();
            if (!matches(rule, b, destinationMac, etherType)) {
                continue;
            }
            if (rule.priority() < best) {
                best = rule.priority();
                chosen = installed.queuePair();
            } else if (rule.priority() == best && installed.queuePair() != chosen) {
                fail("two queue pairs match at priority " + best + ": " + rule);
            }
        }
        return chosen;
    }

    private static boolean matches(FlowRule rule, ByteBuffer b, long destinationMac, int etherType) {
        if (rule.destinationMac() != destinationMac) {
            return false;
        }
        final boolean ipv4Spec = rule.destinationIpv4() != 0 || rule.ipProtocol() != 0;
        final int type = ipv4Spec && rule.etherType() == 0 ? 0x0800 : rule.etherType();
        if (type != 0 && type != etherType) {
            return false;
        }
        if (!ipv4Spec) {
            return true;
        }
        if (rule.destinationIpv4() != 0 && b.getInt(14 + 16) != rule.destinationIpv4()) {
            return false;
        }
        if (rule.ipProtocol() == 0) {
            return true;
        }
        final int headerLength = (b.get(14) & 0x0F) * 4;
        final boolean laterFragment = (b.getShort(14 + 6) & 0x1FFF) != 0;
        if ((b.get(14 + 9) & 0xFF) != rule.ipProtocol() || laterFragment) {
            return false;
        }
        final int sourcePort = b.getShort(14 + headerLength) & 0xFFFF;
        final int destinationPort = b.getShort(14 + headerLength + 2) & 0xFFFF;
        return (sourcePort & rule.sourcePortMask()) == (rule.sourcePort() & rule.sourcePortMask())
            && (destinationPort & rule.destinationPortMask()) == (rule.destinationPort() & rule.destinationPortMask());
    }

    private static byte[] frame(long destinationMac, int etherType, int protocol, int source, int destination,
                                int fragment, int sourcePort, int destinationPort) {
        final ByteBuffer b = ByteBuffer.allocate(14 + 20 + 20);
        b.putShort((short) (destinationMac >>> 32)).putInt((int) destinationMac);
        b.putShort((short) (PEER_MAC >>> 32)).putInt((int) PEER_MAC);
        b.putShort((short) etherType);
        b.put((byte) 0x45).put((byte) 0).putShort((short) 40).putShort((short) 1).putShort((short) fragment)
            .put((byte) 64).put((byte) protocol).putShort((short) 0).putInt(source).putInt(destination);
        b.putShort((short) sourcePort).putShort((short) destinationPort);
        return b.array();
    }

    @ParameterizedTest(name = "{0} shards")
    @ValueSource(ints = {1, 2, 4, 8})
    void theNicPutsEveryFrameWhereTheStackServesIt(int shards) {
        final List<Installed> rules = new ArrayList<>();
        for (int k = 0; k < shards; k++) {
            for (FlowRule rule : FlowRule.shardRules(MAC, ADDRESS, k, shards)) {
                rules.add(new Installed(k, rule));
            }
        }
        assertEquals(shards == 1 ? 3 : 2 * shards * shards + 3, rules.size(), "2 x N rules per shard, 3 more on shard 0");
        final SplittableRandom random = new SplittableRandom(shards);
        final int[] perQueuePair = new int[shards];
        for (int i = 0; i < 20_000; i++) {
            final int sourcePort = random.nextInt(65536);
            final int destinationPort = random.nextInt(65536);
            final int protocol = random.nextInt(3) == 0 ? 6 : random.nextInt(2) == 0 ? 17 : 1;
            final int kind = random.nextInt(10);
            final byte[] frame;
            final int expected;
            switch (kind) {
                case 0 -> { // a later fragment: no ports, shard 0 reassembles
                    frame = frame(MAC, 0x0800, protocol, PEER, ADDRESS, 1 + random.nextInt(0x1FFF), sourcePort, destinationPort);
                    expected = 0;
                }
                case 1 -> { // a first fragment: its ports take it to a shard, whose filter hands it to shard 0
                    frame = frame(MAC, 0x0800, protocol, PEER, ADDRESS, 0x2000, sourcePort, destinationPort);
                    expected = protocol == 1 ? 0 : (sourcePort ^ destinationPort) & (shards - 1);
                }
                case 2 -> { // ARP to our MAC, or any broadcast (ARP or IPv4)
                    final boolean broadcast = random.nextBoolean();
                    frame = frame(broadcast ? MacAddress.BROADCAST : MAC, broadcast && random.nextBoolean() ? 0x0800 : 0x0806,
                        protocol, PEER, ADDRESS, 0, sourcePort, destinationPort);
                    expected = 0;
                }
                case 3 -> { // another host's frame, or ours to an address that is not ours: the kernel's
                    frame = random.nextBoolean()
                        ? frame(OTHER_MAC, 0x0800, protocol, PEER, ADDRESS, 0, sourcePort, destinationPort)
                        : frame(MAC, 0x0800, protocol, PEER, ADDRESS + 7, 0, sourcePort, destinationPort);
                    expected = -1;
                }
                case 4 -> { // a multicast group's frame: no rule until a join adds its MAC to shard 0
                    frame = frame(0x0100_5E01_0203L, 0x0800, 17, PEER, 0xEF01_0203, 0, sourcePort, destinationPort);
                    expected = -1;
                }
                default -> { // a whole TCP, UDP or ICMP packet to us
                    frame = frame(MAC, 0x0800, protocol, PEER, ADDRESS, random.nextBoolean() ? 0x4000 : 0, sourcePort,
                        destinationPort);
                    expected = ShardSteering.shardOf(MemorySegment.ofArray(frame), 0, frame.length, shards, ShardRule.PORT_XOR,
                        null);
                    assertEquals(protocol == 1 ? 0 : (sourcePort ^ destinationPort) & (shards - 1), expected);
                }
            }
            final int steered = steer(rules, frame);
            assertEquals(expected, steered, "frame kind " + kind + ", protocol " + protocol + ", ports " + sourcePort + " > "
                + destinationPort);
            if (steered >= 0) {
                perQueuePair[steered]++;
            }
        }
        for (int k = 0; k < shards; k++) {
            assertTrue(perQueuePair[k] > 20_000 / shards / 4, "queue pair " + k + " got its share: " + perQueuePair[k]);
        }
    }

    @org.junit.jupiter.api.Test
    void shardRulesNeedAPowerOfTwoAndAnAddress() {
        assertThrows(IllegalArgumentException.class, () -> FlowRule.shardRules(MAC, ADDRESS, 0, 3));
        assertThrows(IllegalArgumentException.class, () -> FlowRule.shardRules(MAC, ADDRESS, 4, 4));
        assertThrows(IllegalArgumentException.class, () -> FlowRule.shardRules(MAC, 0, 0, 4));
        final RawQpOptions noAddress = RawQpOptions.defaults();
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.openShards("mlx5_0", 1, MAC, 1500, noAddress, 2));
        final RawQpOptions withAddress = RawQpOptions.builder().ipv4Address(ADDRESS).build();
        assertThrows(IllegalArgumentException.class, () -> RawQpLinks.openShards("mlx5_0", 1, MAC, 1500, withAddress, 3));
    }
}
