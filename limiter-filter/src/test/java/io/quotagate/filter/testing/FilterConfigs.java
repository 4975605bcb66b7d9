package io.quotagate.filter.testing;

import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletContext;

import java.util.Collections;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.Map;

/** A filter's {@code init-param}s as {@code web.xml} would give them, for {@code QuotaFilter.init} without a container. */
public final class FilterConfigs {
    private FilterConfigs() {
    }

    /** A {@link FilterConfig} named {@code quota} with these parameters (a null value leaves the name out) and no context. */
    public static FilterConfig of(Map<String, String> params) {
        Map<String, String> given = new LinkedHashMap<>();
        params.forEach((name, value) -> {
            if (value != null) given.put(name, value);
        });
        return new FilterConfig() {
            @Override
            public String getFilterName() {
                return "quota";
            }

            @Override
            public ServletContext getServletContext() {
                return null;
            }

            @Override
            public String getInitParameter(String name) {
                return given.get(name);
            }

            @Override
            public Enumeration<String> getInitParameterNames() {
                return Collections.enumeration(given.keySet());
            }
        };
    }

    /** {@link #of(Map)} with one parameter. */
    public static FilterConfig of(String name, String value) {
        Map<String, String> one = new LinkedHashMap<>();
        one.put(name, value);
        return of(one);
    }
}
