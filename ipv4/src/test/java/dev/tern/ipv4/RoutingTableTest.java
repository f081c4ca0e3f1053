package dev.tern.ipv4;

import dev.tern.core.net.Ipv4Address;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

class RoutingTableTest {
    private static int ip(String text) {
        return Ipv4Address.parse(text);
    }

    @Test
    void theLongestMatchingPrefixWinsAndTheDefaultRouteCatchesTheRest() {
        final RoutingTable routes = new RoutingTable();
        routes.add(0, 0, ip("198.18.0.1"));
        routes.add(ip("198.18.0.0"), 24, 0);
        routes.add(ip("198.19.0.0"), 16, ip("198.18.0.254"));
        routes.add(ip("198.19.7.0"), 24, ip("198.18.0.253"));
        assertEquals(ip("198.18.0.77"), routes.nextHop(routes.lookup(ip("198.18.0.77")), ip("198.18.0.77")), "on-link");
        assertEquals(ip("198.18.0.253"), routes.nextHop(routes.lookup(ip("198.19.7.9")), ip("198.19.7.9")));
        assertEquals(ip("198.18.0.254"), routes.nextHop(routes.lookup(ip("198.19.8.9")), ip("198.19.8.9")));
        assertEquals(ip("198.18.0.1"), routes.nextHop(routes.lookup(ip("203.0.113.5")), ip("203.0.113.5")));
        routes.remove(0, 0);
        assertEquals(RoutingTable.NO_ROUTE, routes.lookup(ip("203.0.113.5")));
    }

    @Test
    void addingTheSamePrefixAgainReplacesItsGateway() {
        final RoutingTable routes = new RoutingTable();
        routes.add(ip("10.1.0.0"), 16, ip("198.18.0.1"));
        routes.add(ip("10.1.2.3"), 16, ip("198.18.0.2"));
        assertEquals(1, routes.size());
        assertEquals(ip("198.18.0.2"), routes.gateway(routes.lookup(ip("10.1.9.9"))));
    }

    /** Against a model: scan every route, keep the longest that matches. */
    @Test
    void agreesWithAScanForTheLongestMatch() {
        qt().withExamples(300).forAll(longs().all()).checkAssert(seed -> {
            final SplittableRandom random = new SplittableRandom(seed);
            final RoutingTable routes = new RoutingTable();
            final List<int[]> model = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                final int length = random.nextInt(33);
                final int network = random.nextInt() & Ipv4Address.mask(length);
                final int gateway = random.nextInt(1, Integer.MAX_VALUE);
                routes.add(network, length, gateway);
                model.removeIf(r -> r[0] == network && r[1] == length);
                model.add(new int[] {network, length, gateway});
            }
            for (int probe = 0; probe < 100; probe++) {
                final int destination = random.nextInt();
                int best = -1;
                int bestGateway = 0;
                for (int[] route : model) {
                    if (Ipv4Address.inPrefix(destination, route[0], route[1]) && route[1] > best) {
                        best = route[1];
                        bestGateway = route[2];
                    }
                }
                final int found = routes.lookup(destination);
                if (best < 0) {
                    assertEquals(RoutingTable.NO_ROUTE, found);
                } else {
                    assertEquals(best, routes.prefixLength(found));
                    assertEquals(bestGateway, routes.gateway(found));
                }
            }
        });
    }
}
