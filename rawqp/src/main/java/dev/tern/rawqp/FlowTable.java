package dev.tern.rawqp;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The flow-steering rules of one link's queue pair: the fixed rules installed at open (by default our MAC and
 * broadcast), plus one rule per joined multicast MAC, reference-counted as the {@code Link} contract asks. On a link
 * that steers by address, sharing the MAC with the kernel ({@link #steersByAddress}), also one rule per IPv6 address
 * of ours ({@code Link.addIpv6Address}), and an IPv6 group's rule does not trap: the kernel keeps all-nodes and the
 * solicited-node groups, which its own addresses need (RFC 4861 §7.2.1).
 *
 * <p>Rules are installed and removed by an {@link Installer}: {@code ibv_create_flow}/{@code ibv_destroy_flow} on
 * a device, a recorder in tests. Control plane: called on the link's owner thread, allocates freely.
 */
final class FlowTable implements AutoCloseable {
    /** Puts rules into the NIC and takes them out again. */
    interface Installer {
        /** Installs {@code rule}; returns a handle for {@link #remove}. */
        long install(FlowRule rule);

        void remove(long handle);
    }

    private final Installer installer;
    private final Map<FlowRule, Long> fixed = new LinkedHashMap<>();
    private final Map<Long, Long> multicastHandles = new LinkedHashMap<>();
    private final Map<Long, Integer> multicastRefs = new LinkedHashMap<>();
    private final Map<FlowRule, Long> ipv6Handles = new LinkedHashMap<>();
    private final boolean steersByAddress;
    private boolean closed;

    /** Installs {@code rules} in order; if one fails, removes those already installed and rethrows. */
    FlowTable(Installer installer, List<FlowRule> rules) {
        this(installer, rules, false);
    }

    /** As {@link #FlowTable(Installer, List)}, for a link that steers by address when {@code steersByAddress}. */
    FlowTable(Installer installer, List<FlowRule> rules, boolean steersByAddress) {
        this.installer = installer;
        this.steersByAddress = steersByAddress;
        try {
            for (FlowRule rule : rules) {
                fixed.put(rule, installer.install(rule));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    /** Whether the link steers by address and shares its MAC with the kernel. */
    boolean steersByAddress() {
        return steersByAddress;
    }

    void addMulticast(long mac) {
        final int refs = multicastRefs.getOrDefault(mac, 0);
        if (refs == 0) {
            multicastHandles.put(mac, installer.install(multicastRule(mac)));
        }
        multicastRefs.put(mac, refs + 1);
    }

    void removeMulticast(long mac) {
        final int refs = multicastRefs.getOrDefault(mac, 0);
        if (refs == 0) {
            return;
        }
        if (refs == 1) {
            multicastRefs.remove(mac);
            installer.remove(multicastHandles.remove(mac));
        } else {
            multicastRefs.put(mac, refs - 1);
        }
    }

    private FlowRule multicastRule(long mac) {
        final FlowRule rule = FlowRule.destinationMac(mac);
        return steersByAddress && (mac >>> 32) == 0x3333 ? rule.withoutTrapping() : rule;
    }

    /** Steers IPv6 frames to {@code mac} and the address ours (only where the link steers by address). */
    void addIpv6Address(long mac, long high, long low) {
        final FlowRule rule = FlowRule.ipv6(mac, high, low);
        if (steersByAddress && !ipv6Handles.containsKey(rule)) {
            ipv6Handles.put(rule, installer.install(rule));
        }
    }

    void removeIpv6Address(long mac, long high, long low) {
        final Long handle = ipv6Handles.remove(FlowRule.ipv6(mac, high, low));
        if (handle != null) {
            installer.remove(handle);
        }
    }

    /** The rules in force now: fixed rules first, then one per joined multicast MAC, then one per IPv6 address. */
    List<FlowRule> rules() {
        final List<FlowRule> rules = new ArrayList<>(fixed.keySet());
        for (long group : multicastHandles.keySet()) {
            rules.add(multicastRule(group));
        }
        rules.addAll(ipv6Handles.keySet());
        return rules;
    }

    /** Removes every rule, newest first; tries them all and rethrows the first failure. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        final List<Long> handles = new ArrayList<>(fixed.values());
        handles.addAll(multicastHandles.values());
        handles.addAll(ipv6Handles.values());
        fixed.clear();
        multicastHandles.clear();
        multicastRefs.clear();
        ipv6Handles.clear();
        RuntimeException failure = null;
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                installer.remove(handles.get(i));
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
