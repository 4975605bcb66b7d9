package io.quotagate.spring;

import io.quotagate.filter.QuotaFilter;
import io.quotagate.filter.signals.QuotaEvent;
import io.quotagate.filter.signals.QuotaListener;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** Every {@link QuotaListener} bean hears the filter's quota events. */
class QuotaListenerBeansTest {
    private final WebApplicationContextRunner runner = new WebApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(QuotagateAutoConfiguration.class))
            .withPropertyValues("quotagate.plans=classpath:runner-plans.yml");

    @Test
    void everyQuotaListenerBeanHearsTheEvents() {
        BlockingQueue<QuotaEvent> first = new LinkedBlockingQueue<>();
        BlockingQueue<QuotaEvent> second = new LinkedBlockingQueue<>();
        runner.withBean("first", QuotaListener.class, () -> first::add)
                .withBean("second", QuotaListener.class, () -> second::add)
                .run(context -> {
                    var signals = (io.quotagate.filter.internal.signals.QuotaSignals) context.getBean(QuotaFilter.class).control().signals();
                    signals.refused("acme", "pro", "tenant_rate"); // as the request path reports a refusal
                    signals.check();
                    assertThat(first.poll(5, TimeUnit.SECONDS)).isInstanceOf(QuotaEvent.Exhausted.class);
                    assertThat(second.poll(5, TimeUnit.SECONDS)).isInstanceOf(QuotaEvent.Exhausted.class);
                });
    }
}
