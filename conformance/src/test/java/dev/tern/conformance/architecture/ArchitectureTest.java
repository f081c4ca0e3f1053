package dev.tern.conformance.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import dev.tern.core.testing.ModuleLadder;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Guard rail (rules a later change could break silently fail a test instead): no class of a module depends on a class of a module the ladder does not put below it
 * ({@link ModuleLadder}; docs/DESIGN.md): nothing looks upward (ipv4 never imports tcp), nothing sideways (udp and tcp,
 * rawqp and afpacket, cli and conformance). Runs here because conformance's test class path holds every module, test
 * classes and test-jars included; the poms are checked by core's {@code ModuleLadderTest}, which runs in every build.
 * Referring to a class only by its name in a string (conformance's interop tests start {@code dev.tern.cli.Tern} in
 * a child JVM) is not a dependency and is allowed.
 */
class ArchitectureTest {
    private static final String FIXTURE = "dev.tern.conformance.architecture.fixture";

    @Test
    void everyModuleDependsOnlyDownTheLadder() {
        final JavaClasses classes = new ClassFileImporter().importPackages("dev.tern");
        assertTrue(classes.size() > 400, "imported only " + classes.size() + " classes: is the class path complete?");
        for (String module : ModuleLadder.modules()) {
            final String name = "dev.tern." + module;
            assertTrue(classes.stream().anyMatch(c -> c.getPackageName().startsWith(name)), "no classes of " + module + " on the class path");
        }
        final List<String> violations = new ArrayList<>();
        for (ArchRule rule : ladderRules("dev.tern")) {
            final EvaluationResult result = rule.evaluate(classes);
            violations.addAll(result.getFailureReport().getDetails());
        }
        assertEquals(List.of(), violations);
    }

    /** The rule can fail: pointed at a fixture ladder where udp uses tcp and ipv4 uses stack, it reports both. */
    @Test
    void rejectsSidewaysAndUpwardClassDependencies() {
        final JavaClasses fixture = new ClassFileImporter().importPackages(FIXTURE);
        final List<String> violations = new ArrayList<>();
        for (ArchRule rule : ladderRules(FIXTURE)) {
            violations.addAll(rule.evaluate(fixture).getFailureReport().getDetails());
        }
        assertFalse(violations.isEmpty());
        assertTrue(violations.stream().anyMatch(v -> v.contains("UdpFixture") && v.contains("TcpFixture")), violations::toString);
        assertTrue(violations.stream().anyMatch(v -> v.contains("Ipv4Fixture") && v.contains("StackFixture")), violations::toString);
        assertTrue(violations.stream().noneMatch(v -> v.matches("\\w+ <" + FIXTURE + "\\.tcp\\..*")), violations::toString);
    }

    /** One rule per module of the ladder, for the module packages under {@code root}. */
    static List<ArchRule> ladderRules(String root) {
        final List<ArchRule> rules = new ArrayList<>();
        for (String module : ModuleLadder.modules()) {
            final List<String> forbidden = new ArrayList<>();
            for (String other : ModuleLadder.modules()) {
                if (!other.equals(module) && !ModuleLadder.below(module).contains(other)) {
                    forbidden.add(root + "." + other + "..");
                }
            }
            if (!forbidden.isEmpty()) {
                rules.add(noClasses().that().resideInAPackage(root + "." + module + "..")
                    .should().dependOnClassesThat().resideInAnyPackage(forbidden.toArray(String[]::new))
                    .allowEmptyShould(true)
                    .because(module + " may use only " + ModuleLadder.below(module) + " (docs/DESIGN.md, the module ladder)"));
            }
        }
        return rules;
    }
}
