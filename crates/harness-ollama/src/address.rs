//! The server's address: `OLLAMA_HOST`-style host strings made into a base URL.

use std::net::IpAddr;

use crate::Error;
use crate::config::{Api, DEFAULT_OLLAMA_URL, DEFAULT_OPENAI_URL};

/// A server's base URL: scheme, host, port and an optional path prefix, no trailing slash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ServerUrl {
    /// `scheme://host:port[/prefix]`.
    root: String,
    /// True if and only if the host is this machine, which a proxy must never handle.
    is_local: bool,
}

impl ServerUrl {
    /// Reads `host` the way Ollama reads `OLLAMA_HOST`.
    ///
    /// 1. Surrounding whitespace and quotes are dropped; an empty host means the API's default.
    /// 2. Without `scheme://`, the scheme is `http` and the default port is the API's
    ///    (11434 or 8080); with `http://` or `https://` it is 80 or 443. Other schemes are refused.
    /// 3. The host may be a name, an IPv4 address or an IPv6 address (bracketed when a port
    ///    follows); an empty host is `127.0.0.1`.
    /// 4. A port must be a number from 0 to 65535. (Ollama falls back to its default on a bad
    ///    port; we refuse it, so a typo is not silently ignored.)
    /// 5. A path becomes a prefix of every endpoint; for the OpenAI-compatible API a final `/v1`
    ///    is dropped, since it is added to every endpoint anyway.
    pub(crate) fn parse(api: Api, host: &str) -> Result<ServerUrl, Error> {
        let trimmed = host.trim().trim_matches(['"', '\'']).trim();
        let text = match (trimmed.is_empty(), api) {
            (false, _) => trimmed,
            (true, Api::Ollama) => DEFAULT_OLLAMA_URL,
            (true, Api::OpenAi) => DEFAULT_OPENAI_URL,
        };
        let invalid = |reason: String| Error::InvalidAddress {
            value: host.to_owned(),
            reason,
        };

        let (scheme, rest, default_port) = match text.split_once("://") {
            None => (
                "http",
                text,
                match api {
                    Api::Ollama => 11434,
                    Api::OpenAi => 8080,
                },
            ),
            Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
                "http" => ("http", rest, 80),
                "https" => ("https", rest, 443),
                _ => {
                    return Err(invalid(format!(
                        "the scheme {scheme:?} is not supported: use http:// or https://"
                    )));
                }
            },
        };

        let (authority, path) = match rest.split_once('/') {
            Some((authority, path)) => (authority, path.trim_matches('/')),
            None => (rest, ""),
        };
        let (host_name, port) = split_host_port(authority).map_err(invalid)?;
        let port = match port {
            None => default_port,
            Some(port) => port.parse::<u16>().map_err(|_| {
                invalid(format!("the port {port:?} is not a number from 0 to 65535"))
            })?,
        };
        let host_name = if host_name.is_empty() {
            "127.0.0.1"
        } else {
            host_name
        };

        let path = match api {
            Api::OpenAi => path
                .strip_suffix("v1")
                .unwrap_or(path)
                .trim_end_matches('/'),
            Api::Ollama => path,
        };
        let bracketed = if host_name.contains(':') {
            format!("[{host_name}]")
        } else {
            host_name.to_owned()
        };
        let mut root = format!("{scheme}://{bracketed}:{port}");
        if !path.is_empty() {
            root.push('/');
            root.push_str(path);
        }
        Ok(ServerUrl {
            root,
            is_local: is_local_host(host_name),
        })
    }

    /// The base URL, e.g. `http://127.0.0.1:11434`.
    pub(crate) fn root(&self) -> &str {
        &self.root
    }

    /// The URL of `path` (which starts with `/`) on this server.
    pub(crate) fn endpoint(&self, path: &str) -> String {
        format!("{}{path}", self.root)
    }

    /// True if and only if the server is on this machine.
    pub(crate) fn is_local(&self) -> bool {
        self.is_local
    }
}

/// Splits `host[:port]`, `[v6][:port]` or a bare IPv6 address.
fn split_host_port(authority: &str) -> Result<(&str, Option<&str>), String> {
    if let Some(bracketed) = authority.strip_prefix('[') {
        let Some((host, after)) = bracketed.split_once(']') else {
            return Err("an IPv6 address opened with \"[\" is not closed with \"]\"".to_owned());
        };
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(format!("unexpected {after:?} after the IPv6 address")),
        };
    }
    match authority.split_once(':') {
        Some((host, port)) if !port.contains(':') => Ok((host, Some(port))),
        // No colon: no port. Several colons and no brackets: a bare IPv6 address, as
        // Ollama accepts.
        _ => Ok((authority, None)),
    }
}

fn is_local_host(host: &str) -> bool {
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip.is_unspecified(),
        Err(_) => {
            let host = host.to_ascii_lowercase();
            host == "localhost" || host.ends_with(".localhost")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! parses {
        ($($name:ident: $api:expr, $host:expr => $root:expr, local: $local:expr;)*) => {$(
            #[test]
            fn $name() {
                let url = ServerUrl::parse($api, $host).unwrap();
                assert_eq!(url.root(), $root, "root of {:?}", $host);
                assert_eq!(url.is_local(), $local, "locality of {:?}", $host);
            }
        )*};
    }

    parses! {
        empty_means_the_ollama_default: Api::Ollama, "" => "http://127.0.0.1:11434", local: true;
        empty_means_the_openai_default: Api::OpenAi, "  " => "http://127.0.0.1:8080", local: true;
        bare_host_gets_the_api_port: Api::Ollama, "example.com" => "http://example.com:11434", local: false;
        bare_host_gets_the_openai_port: Api::OpenAi, "gpu-box" => "http://gpu-box:8080", local: false;
        host_and_port: Api::Ollama, "0.0.0.0:9999" => "http://0.0.0.0:9999", local: true;
        empty_host_with_port: Api::Ollama, ":4321" => "http://127.0.0.1:4321", local: true;
        http_scheme_defaults_to_port_80: Api::Ollama, "http://example.com" => "http://example.com:80", local: false;
        https_scheme_defaults_to_port_443: Api::Ollama, "https://example.com" => "https://example.com:443", local: false;
        scheme_is_case_insensitive: Api::Ollama, "HTTP://localhost:1" => "http://localhost:1", local: true;
        quotes_and_spaces_are_dropped: Api::Ollama, " \"localhost:11434\" " => "http://localhost:11434", local: true;
        trailing_slash_is_dropped: Api::Ollama, "http://127.0.0.1:11434/" => "http://127.0.0.1:11434", local: true;
        path_prefix_is_kept: Api::Ollama, "https://proxy.example/ollama/" => "https://proxy.example:443/ollama", local: false;
        openai_v1_suffix_is_dropped: Api::OpenAi, "http://127.0.0.1:8080/v1" => "http://127.0.0.1:8080", local: true;
        openai_v1_suffix_after_prefix: Api::OpenAi, "http://h:1/llm/v1/" => "http://h:1/llm", local: false;
        ollama_keeps_a_v1_path: Api::Ollama, "http://h:1/v1" => "http://h:1/v1", local: false;
        bracketed_ipv6_with_port: Api::Ollama, "[::1]:8000" => "http://[::1]:8000", local: true;
        bracketed_ipv6_without_port: Api::Ollama, "[::1]" => "http://[::1]:11434", local: true;
        bare_ipv6: Api::Ollama, "fe80::1" => "http://[fe80::1]:11434", local: false;
        localhost_subdomain_is_local: Api::OpenAi, "app.localhost:3000" => "http://app.localhost:3000", local: true;
        loopback_range_is_local: Api::OpenAi, "127.1.2.3:80" => "http://127.1.2.3:80", local: true;
    }

    macro_rules! refuses {
        ($($name:ident: $host:expr => $reason:expr;)*) => {$(
            #[test]
            fn $name() {
                let error = ServerUrl::parse(Api::Ollama, $host).unwrap_err();
                assert_eq!(
                    error.to_string(),
                    format!("invalid server address {:?}: {}", $host, $reason)
                );
            }
        )*};
    }

    refuses! {
        port_out_of_range: "localhost:65536" => "the port \"65536\" is not a number from 0 to 65535";
        port_not_a_number: "localhost:http" => "the port \"http\" is not a number from 0 to 65535";
        unsupported_scheme: "ftp://h" => "the scheme \"ftp\" is not supported: use http:// or https://";
        unclosed_bracket: "[::1:80" => "an IPv6 address opened with \"[\" is not closed with \"]\"";
        junk_after_bracket: "[::1]x" => "unexpected \"x\" after the IPv6 address";
    }

    #[test]
    fn endpoints_are_appended_to_the_root() {
        let url = ServerUrl::parse(Api::OpenAi, "http://h:1/llm/v1").unwrap();
        assert_eq!(url.endpoint("/v1/models"), "http://h:1/llm/v1/models");
    }
}
