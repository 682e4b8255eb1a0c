//! The small documents outside the app, rendered on the server: sign-in, sign-out, the answer
//! to a wrong token, and "not found" — with the app's head (stylesheet, viewport, language).

use leptos::prelude::*;

use crate::i18n::Lang;

/// Which small document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plain {
    /// The token form.
    SignIn,
    /// The sign-out button.
    SignOut,
    /// The token was wrong: try again.
    WrongToken,
    /// No page here.
    NotFound,
}

/// The document `which` under `base`, in `lang`.
pub fn page(base: &str, lang: Lang, which: Plain) -> String {
    let (s, t) = (lang.s(), lang.t());
    let base = base.to_string();
    let (title, body) = match which {
        Plain::SignIn => (
            s.login_title.to_string(),
            view! {
                <h1 class="page-title">"gpudash"</h1>
                <form method="post" action=format!("{base}/login") class="filters">
                    <label>{s.login_token}" "<input type="password" name="token" autocomplete="current-password" required/></label>
                    <button type="submit">{s.login_submit}</button>
                </form>
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
    Owner::new().with(move || {
        view! {
            <!DOCTYPE html>
            <html lang=lang.code()>
                <head>
                    <meta charset="utf-8"/>
                    <meta name="viewport" content="width=device-width, initial-scale=1"/>
                    <title>{title}</title>
                    <link rel="stylesheet" href=format!("{base}/pkg/gpudash.css")/>
                </head>
                <body><main class="app">{body}</main></body>
            </html>
        }
        .to_html()
    })
}
