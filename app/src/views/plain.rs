//! The small documents outside the app, rendered on the server: sign-in, sign-out, the answer
//! to a wrong token, and "not found" — with the app's head (stylesheet, viewport, language).

use leptos::prelude::*;

use crate::i18n::Lang;

/// Which small document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    /// The sign-in page: the token form (`token`), the identity provider's button (`oidc`).
    SignIn {
        /// The token form.
        token: bool,
        /// The button that signs in through the site's identity provider.
        oidc: bool,
    },
    /// The sign-out button.
    SignOut,
    /// The token was wrong: try again.
    WrongToken,
    /// No page here.
    NotFound,
}

/// Why a sign-in through the identity provider did not succeed, with a way to start again.
pub fn sign_in_failed(base: &str, lang: Lang, why: &str) -> String {
    let s = lang.s();
    let (base, why) = (base.to_string(), why.to_string());
    document(&base, lang, s.login_title.to_string(), move |b| {
        view! { <p>{s.login_failed}" "{why}" "<a href=format!("{b}/login")>{s.login_again}</a></p> }.into_any()
    })
}

/// The page that ends a sign-in through the identity provider: it opens gpudash by a same-site
/// navigation (a refresh, no script), so that the session cookie (`SameSite=Strict`), set on
/// the provider's cross-site redirect, is sent with the first request.
pub fn signed_in(base: &str, lang: Lang) -> String {
    let s = lang.s();
    let to = format!("0;url={base}/");
    let html = document(base, lang, s.login_title.to_string(), move |b| {
        view! { <p><a href=format!("{b}/")>{s.login_done}</a></p> }.into_any()
    });
    html.replacen("<head>", &format!("<head><meta http-equiv=\"refresh\" content=\"{to}\"/>"), 1)
}

/// The document `which` under `base`, in `lang`.
pub fn page(base: &str, lang: Lang, which: Plain) -> String {
    let (s, t) = (lang.s(), lang.t());
    let base = base.to_string();
    let (title, body) = match which {
        Plain::SignIn { token, oidc } => (
            s.login_title.to_string(),
            view! {
                <h1 class="page-title">"gpudash"</h1>
                {oidc.then(|| view! { <p><a class="button" href=format!("{base}/login/oidc")>{s.login_oidc}</a></p> })}
                {(oidc && token).then(|| view! { <p>{s.login_or_token}</p> })}
                {token.then(|| view! {
                    <form method="post" action=format!("{base}/login") class="filters">
                        <label>{s.login_token}" "<input type="password" name="token" autocomplete="current-password" required/></label>
                        <button type="submit">{s.login_submit}</button>
                    </form>
                })}
            }
            .into_any(),
        ),
        Plain::SignOut => (
            s.logout_title.to_string(),
            view! {
                <h1 class="page-title">"gpudash"</h1>
                <form method="post" action=format!("{base}/logout") class="filters">
                    <button type="submit">{s.logout_submit}</button>
                </form>
            }
            .into_any(),
        ),
        Plain::WrongToken => (
            s.login_title.to_string(),
            view! { <p>{s.login_wrong}" "<a href=format!("{base}/login")>{s.login_again}</a></p> }.into_any(),
        ),
        Plain::NotFound => (
            format!("gpudash · {}", t.not_found),
            view! { <h1 class="page-title">{t.not_found}</h1><p><a href=format!("{base}/")>{t.not_found_back}</a></p> }
                .into_any(),
        ),
    };
    document(&base, lang, title, move |_| body)
}

/// A small document with the app's head: `title`, and the body `body` makes (given the base).
fn document(base: &str, lang: Lang, title: String, body: impl FnOnce(String) -> AnyView + 'static) -> String {
    let base = base.to_string();
    Owner::new().with(move || {
        let inner = body(base.clone());
        view! {
            <!DOCTYPE html>
            <html lang=lang.code()>
                <head>
                    <meta charset="utf-8"/>
                    <meta name="viewport" content="width=device-width, initial-scale=1"/>
                    <title>{title}</title>
                    <link rel="stylesheet" href=format!("{base}/pkg/gpudash.css")/>
                </head>
                <body><main class="app">{inner}</main></body>
            </html>
        }
        .to_html()
    })
}
