package dev.tern.lab;

import dev.tern.lab.link.LinkRate;
import dev.tern.lab.link.LossModel;
import dev.tern.lab.link.Outages;
import dev.tern.lab.link.QueueLimit;

import java.util.List;
import java.util.function.Supplier;

/**
 * Everything one lab run needs: the bottleneck (rate, delays per direction, queue, discipline, loss, outages), the
 * flows, the UDP cross traffic, how long to run and the seed. The rate, loss and outages are made fresh for each run
 * (they hold state).
 */
public record ScenarioSpec(String name, long seed, long durationNs, Supplier<LinkRate> rate, String rateText,
                           long forwardDelayNs, long reverseDelayNs, QueueLimit queue, DisciplineSpec discipline,
                           Supplier<LossModel> loss, String lossText, Supplier<Outages> outages, List<FlowSpec> flows,
                           List<UdpSpec> udp) {
    public ScenarioSpec {
        flows = List.copyOf(flows);
        udp = List.copyOf(udp);
        if (flows.isEmpty()) {
            throw new IllegalArgumentException("a scenario needs at least one flow");
        }
    }

    /** A scenario without cross traffic. */
    public ScenarioSpec(String name, long seed, long durationNs, Supplier<LinkRate> rate, String rateText,
                        long forwardDelayNs, long reverseDelayNs, QueueLimit queue, DisciplineSpec discipline,
                        Supplier<LossModel> loss, String lossText, Supplier<Outages> outages, List<FlowSpec> flows) {
        this(name, seed, durationNs, rate, rateText, forwardDelayNs, reverseDelayNs, queue, discipline, loss, lossText,
            outages, flows, List.of());
    }
}
