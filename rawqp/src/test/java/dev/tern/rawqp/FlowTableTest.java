package dev.tern.rawqp;

import dev.tern.ethernet.wire.MacAddress;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FlowTableTest {
    private static final long MAC = 0x0200_0000_0001L;
    private static final long GROUP = MacAddress.ofIpv4Multicast(0xE000_00FB);

    /** Records installs and removals; handles count up from 100. */
    static final class Recorder implements FlowTable.Installer {
        final List<FlowRule> installed = new ArrayList<>();
        final List<Long> removed = new ArrayList<>();
        int failOnInstall = -1;

        @Override
        public long install(FlowRule rule) {
            if (installed.size() == failOnInstall) {
                throw new IllegalStateException("device refused rule " + rule);
            }
            installed.add(rule);
            return 100 + installed.size() - 1;
        }

        @Override
        public void remove(long handle) {
            removed.add(handle);
        }
    }

    @Test
    void fixedRulesAreInstalledInOrderAndRemovedNewestFirst() {
        final Recorder recorder = new Recorder();
        final FlowTable table = new FlowTable(recorder, List.of(FlowRule.destinationMac(MAC), FlowRule.destinationMac(MacAddress.BROADCAST)));
        assertEquals(List.of(FlowRule.destinationMac(MAC), FlowRule.destinationMac(MacAddress.BROADCAST)), recorder.installed);
        table.close();
        assertEquals(List.of(101L, 100L), recorder.removed);
    }

    @Test
    void aMulticastRuleLivesFromTheFirstJoinToTheLastLeave() {
        final Recorder recorder = new Recorder();
        final FlowTable table = new FlowTable(recorder, List.of());
        table.addMulticast(GROUP);
        table.addMulticast(GROUP);
        assertEquals(List.of(FlowRule.destinationMac(GROUP)), recorder.installed, "one rule for two joins");
        table.removeMulticast(GROUP);
        assertEquals(List.of(), recorder.removed);
        assertEquals(List.of(FlowRule.destinationMac(GROUP)), table.rules());
        table.removeMulticast(GROUP);
        assertEquals(List.of(100L), recorder.removed);
        table.removeMulticast(GROUP);
        assertEquals(List.of(100L), recorder.removed, "leaving a group never joined does nothing");
        assertEquals(List.of(), table.rules());
    }

    @Test
    void ifARuleFailsAtOpenTheOnesAlreadyInstalledAreRemoved() {
        final Recorder recorder = new Recorder();
        recorder.failOnInstall = 1;
        assertThrows(IllegalStateException.class,
            () -> new FlowTable(recorder, List.of(FlowRule.destinationMac(MAC), FlowRule.destinationMac(MacAddress.BROADCAST))));
        assertEquals(List.of(100L), recorder.removed);
    }

    @Test
    void sourcePortShardsSplitPortsByTheirLowBits() {
        final FlowRule shard = FlowRule.tcp(MAC, 0xC612_0002, 80).sourcePortShard(3, 4);
        assertEquals(3, shard.sourcePort());
        assertEquals(3, shard.sourcePortMask());
        assertEquals(3, shard.specCount());
        assertEquals(100, shard.encodedSize());
        assertThrows(IllegalArgumentException.class, () -> FlowRule.tcp(MAC, 1, 80).sourcePortShard(4, 4));
        assertThrows(IllegalArgumentException.class, () -> FlowRule.tcp(MAC, 1, 80).sourcePortShard(0, 3));
        assertThrows(IllegalArgumentException.class, () -> new FlowRule(MAC, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, false));
        assertEquals(60, FlowRule.destinationMac(MAC).encodedSize());
        assertEquals(84, FlowRule.ipv4(MAC, 1).encodedSize());
    }

    /**
     * A link that steers by address (the kernel keeps the MAC) gets a rule per IPv6 address of ours, and its IPv6
     * groups' rules do not trap (the kernel keeps all-nodes and the solicited-node groups); an IPv4 group's still
     * does. A link that takes every frame to our MAC adds no address rule.
     */
    @Test
    void aLinkSteeringByAddressGetsARulePerIpv6AddressAndSharesIpv6Groups() {
        final Recorder recorder = new Recorder();
        final FlowTable table = new FlowTable(recorder, List.of(FlowRule.ipv4(MAC, 0xC612_0002)), true);
        final long allNodes = 0x3333_0000_0001L;
        table.addIpv6Address(MAC, 0x2001_0db8_0000_0000L, 2);
        table.addIpv6Address(MAC, 0x2001_0db8_0000_0000L, 2);
        table.addMulticast(allNodes);
        table.addMulticast(GROUP);
        assertEquals(List.of(FlowRule.ipv4(MAC, 0xC612_0002), FlowRule.ipv6(MAC, 0x2001_0db8_0000_0000L, 2),
            FlowRule.destinationMac(allNodes).withoutTrapping(), FlowRule.destinationMac(GROUP)), recorder.installed);
        assertEquals(List.of(FlowRule.ipv4(MAC, 0xC612_0002), FlowRule.destinationMac(allNodes).withoutTrapping(),
            FlowRule.destinationMac(GROUP), FlowRule.ipv6(MAC, 0x2001_0db8_0000_0000L, 2)), table.rules());
        table.removeIpv6Address(MAC, 0x2001_0db8_0000_0000L, 2);
        assertEquals(List.of(101L), recorder.removed);
        table.close();
        assertEquals(List.of(101L, 103L, 102L, 100L), recorder.removed);

        final Recorder byMac = new Recorder();
        final FlowTable everything = new FlowTable(byMac, List.of(FlowRule.destinationMac(MAC)));
        everything.addIpv6Address(MAC, 0x2001_0db8_0000_0000L, 2);
        everything.addMulticast(allNodes);
        assertEquals(List.of(FlowRule.destinationMac(MAC), FlowRule.destinationMac(allNodes)), byMac.installed);
        assertEquals(148, FlowRule.ipv6(MAC, 1, 2).encodedSize());
        assertThrows(IllegalArgumentException.class, () -> FlowRule.ipv6(MAC, 0, 0));
    }
}
