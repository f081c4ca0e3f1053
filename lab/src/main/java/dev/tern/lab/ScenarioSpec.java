package dev.tern.lab;

import dev.tern.lab.link.LinkRate;
import dev.tern.lab.link.LossModel;
import dev.tern.lab.link.Outages;
import dev.tern.lab.link.QueueLimit;

import java.util.List;
import java.util.function.Supplier;

/**
 * Everything one lab run needs: the bottleneck (rate, delays per direction, queue, discipline, loss, outages), the
 * flows, how long to run and the seed. The rate, loss and outages are made fresh for each run (they hold state).
 */
public record ScenarioSpec(String name, long seed, long durationNs, Supplier<LinkRate> rate, String rateText,
                           long forwardDelayNs, long reverseDelayNs, QueueLimit queue, DisciplineSpec discipline,
                           Supplier<LossModel> loss, String lossText, Supplier<Outages> outages, List<FlowSpec> flows) {
    public ScenarioSpec {
        flows = List.copyOf(flows);
        if (flows.isEmpty()) {
            throw new IllegalArgumentException("a scenario needs at least one flow");
        }
    }
}
