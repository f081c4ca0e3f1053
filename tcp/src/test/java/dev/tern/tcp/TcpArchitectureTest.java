package dev.tern.tcp;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.Test;

import java.util.List;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.fields;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TCP has no hub: {@link TcpLayer} is the shard's API and the wiring, and every other class of the module gets its
 * collaborators through its constructor. A field of type {@code TcpLayer} anywhere else is a back-pointer that lets
 * a helper call into every other room through the layer, which is how the layer grew to 1,900 lines.
 */
class TcpArchitectureTest {
    /** Only the wiring, {@link TcpLayer} itself, may hold a {@code TcpLayer}. */
    static ArchRule onlyTheWiringHoldsTheLayer() {
        return fields().that().haveRawType(TcpLayer.class).should().beDeclaredIn(TcpLayer.class)
            .because("a room of dev.tern.tcp gets its collaborators through its constructor, never the layer")
            .allowEmptyShould(true);
    }

    @Test
    void noClassOfTcpButTheWiringHoldsTheLayer() {
        final JavaClasses classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.tern.tcp");
        assertTrue(classes.contain(TcpInput.class) && classes.contain(ConnectionLifecycle.class),
            "imported " + classes.size() + " classes: is the class path complete?");
        onlyTheWiringHoldsTheLayer().check(classes);
    }

    /** The rule can fail: a helper with a back-pointer, as six of them had, is reported by name. */
    @Test
    void aHelperWithABackPointerIsReported() {
        final JavaClasses classes = new ClassFileImporter().importClasses(HelperWithBackPointer.class, TcpLayer.class);
        final List<String> details = onlyTheWiringHoldsTheLayer().evaluate(classes).getFailureReport().getDetails();
        assertEquals(1, details.size(), details::toString);
        assertTrue(details.get(0).contains("HelperWithBackPointer.layer"), details::toString);
    }

    /** The shape the rule forbids: a helper that reaches its collaborators through the layer. */
    static final class HelperWithBackPointer {
        private final TcpLayer layer;

        HelperWithBackPointer(TcpLayer layer) {
            this.layer = layer;
        }

        int connections() {
            return layer.connectionCount();
        }
    }
}
