//! Sign-in through the site's identity provider (#57), against a real OpenID Provider:
//! zitadel/oidc's example provider (its `op` package, OpenID Certified; `tests/oidc-provider`,
//! built by `./test.sh` from the Go module proxy) on 127.0.0.1, with gpudash registered as a
//! confidential web client. The browser's part is played by HTTP requests that follow each
//! redirect by hand and keep gpudash's cookies, as a browser would.

use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use gpudash_tests::{free_port, root, Gpudash, Proc};

/// The provider, killed on drop.
struct Provider {
    _proc: Proc,
    issuer: String,
    _dir: tempfile::TempDir,
}

const SECRET: &str = "gpudash-test-client-secret-not-for-use";

/// Starts the provider with gpudash's callback `redirect` and two people: an operator of the
/// factory (verified address) and a visitor from elsewhere.
async fn provider(redirect: &str) -> anyhow::Result<Provider> {
    let bin = root().join("target/oidc-provider/bin/gpudash-oidc-provider");
    anyhow::ensure!(
        bin.exists(),
        "{} missing: ./test.sh builds it (scripts/setup.sh ensure_oidc_provider)",
        bin.display()
    );
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("secret"), SECRET)?;
    let users = serde_json::json!({
        "u1": {"ID": "u1", "Username": "operator@factory.example", "Password": "operator-password-1",
               "FirstName": "Aiko", "LastName": "Tanaka", "Email": "operator@factory.example", "EmailVerified": true,
               "PreferredLanguage": "ja"},
        "u2": {"ID": "u2", "Username": "visitor@elsewhere.example", "Password": "visitor-password-2",
               "FirstName": "Vic", "LastName": "Visitor", "Email": "visitor@elsewhere.example", "EmailVerified": true,
               "PreferredLanguage": "en"}
    });
    std::fs::write(dir.path().join("users.json"), users.to_string())?;
    let args: Vec<String> = [
        "-listen",
        "127.0.0.1:0",
        "-client",
        "gpudash",
        "-secret-file",
        &dir.path().join("secret").display().to_string(),
        "-redirect",
        redirect,
        "-users",
        &dir.path().join("users.json").display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let proc = Proc::spawn(&bin, &args)?;
    let t = Instant::now();
    loop {
        if let Some(issuer) = proc.output().lines().find_map(|l| l.strip_prefix("issuer ")).map(str::to_string) {
            return Ok(Provider { _proc: proc, issuer, _dir: dir });
        }
        if t.elapsed() > Duration::from_secs(20) {
            bail!("the provider did not start:\n{}", proc.output());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// gpudash on `port` signing in through the provider at `issuer` (with `extra` flags), and the
/// directory its client secret is in.
async fn site(port: u16, issuer: &str, extra: &[&str]) -> anyhow::Result<(Gpudash, tempfile::TempDir)> {
    let dir = tempfile::tempdir()?;
    let secret = dir.path().join("secret");
    std::fs::write(&secret, SECRET)?;
    let (secret, callback) = (secret.display().to_string(), format!("http://127.0.0.1:{port}/login/oidc/callback"));
    let mut args = vec![
        "--demo",
        "--oidc-issuer",
        issuer,
        "--oidc-client-id",
        "gpudash",
        "--oidc-client-secret-file",
        &secret,
        "--oidc-redirect-url",
        &callback,
    ];
    args.extend_from_slice(extra);
    Ok((Gpudash::start_on(port, &args).await?, dir))
}

/// An HTTP client that follows nothing.
fn client() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap_or_else(|e| panic!("{e}"))
}

/// Where a redirect goes, resolved against the URL it came from.
fn location(r: &reqwest::Response) -> anyhow::Result<String> {
    let to = r.headers().get("location").context("no Location")?.to_str()?;
    Ok(r.url().join(to)?.to_string())
}

/// A cookie `name` a response sets, with its attributes.
fn set_cookie(r: &reqwest::Response, name: &str) -> Option<String> {
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with(&format!("{name}=")))
        .map(str::to_string)
}

fn value(cookie: &str) -> String {
    cookie.split(';').next().unwrap_or("").to_string()
}

/// One sign-in up to the provider's redirect back to gpudash: the callback URL and the state
/// cookie gpudash bound to this browser.
async fn to_callback(c: &reqwest::Client, gd: &str, user: &str, password: &str) -> anyhow::Result<(String, String)> {
    let r = c.get(format!("{gd}/login/oidc")).send().await?;
    anyhow::ensure!(r.status().is_redirection(), "GET /login/oidc: {}", r.status());
    let state = set_cookie(&r, "gpudash_oidc_state").context("no state cookie")?;
    assert!(state.contains("HttpOnly") && state.contains("SameSite=Lax"), "{state}");
    let mut url = location(&r)?;
    // The provider: its authorization endpoint sends the browser to its login page.
    let mut login = None;
    for _ in 0..5 {
        let r = c.get(&url).send().await?;
        if r.status().is_redirection() {
            url = location(&r)?;
            continue;
        }
        anyhow::ensure!(r.status().is_success(), "{url}: {}", r.status());
        login = Some(url.clone());
        break;
    }
    let login = login.context("no login page")?;
    let id = reqwest::Url::parse(&login)?
        .query_pairs()
        .find(|(k, _)| k == "authRequestID")
        .map(|(_, v)| v.to_string())
        .context("no authRequestID")?;
    let r = c.post(&login).form(&[("username", user), ("password", password), ("id", id.as_str())]).send().await?;
    if !r.status().is_redirection() {
        bail!("the provider refused the password ({})", r.status());
    }
    let mut url = location(&r)?;
    for _ in 0..5 {
        if url.starts_with(gd) {
            return Ok((url, value(&state)));
        }
        let r = c.get(&url).send().await?;
        anyhow::ensure!(r.status().is_redirection(), "{url}: {} {}", r.status(), r.text().await.unwrap_or_default());
        url = location(&r)?;
    }
    Err(anyhow!("the provider never sent the browser back"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn people_sign_in_through_the_sites_identity_provider() {
    let port = free_port();
    let gd_url = format!("http://127.0.0.1:{port}");
    let callback = format!("{gd_url}/login/oidc/callback");
    let op = provider(&callback).await.unwrap();
    let (gd, _dir) = site(port, &op.issuer, &["--oidc-allowed-email", "@factory.example"]).await.unwrap();
    let c = client();
    // Signed out: pages send people to sign in, the API asks for credentials, probes stay open.
    let r = c.get(format!("{}/", gd.url)).header("accept", "text/html").send().await.unwrap();
    assert!(r.status().is_redirection() && location(&r).unwrap().ends_with("/login"), "{}", r.status());
    assert_eq!(c.get(format!("{}/api/v1/cluster", gd.url)).send().await.unwrap().status(), 401);
    assert_eq!(c.get(format!("{}/healthz", gd.url)).send().await.unwrap().status(), 200);
    let page = c.get(format!("{}/login?lang=ja", gd.url)).send().await.unwrap().text().await.unwrap();
    assert!(page.contains("/login/oidc") && page.contains("組織のアカウントでサインイン"), "{page}");
    assert!(!page.contains("name=\"token\""), "no token form without a token file");

    // The operator signs in.
    let (back, state) = to_callback(&c, &gd.url, "operator@factory.example", "operator-password-1").await.unwrap();
    let r = c.get(&back).header("cookie", &state).send().await.unwrap();
    assert_eq!(r.status(), 200);
    let session = set_cookie(&r, "gpudash_session").expect("a session");
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Strict") && !session.contains("Secure"),
        "{session}"
    );
    let html = r.text().await.unwrap();
    assert!(html.contains("http-equiv=\"refresh\""), "{html}");
    let r = c.get(format!("{}/api/v1/cluster", gd.url)).header("cookie", value(&session)).send().await.unwrap();
    assert_eq!(r.status(), 200, "the session opens the API");
    // The same callback again (a replayed code): refused.
    let r = c.get(&back).header("cookie", &state).send().await.unwrap();
    assert_eq!(r.status(), 401);
    assert!(set_cookie(&r, "gpudash_session").is_none());

    // A callback this browser did not start (login CSRF: another browser's code and state).
    let (theirs, _) = to_callback(&c, &gd.url, "operator@factory.example", "operator-password-1").await.unwrap();
    let (_, mine) = to_callback(&c, &gd.url, "operator@factory.example", "operator-password-1").await.unwrap();
    let r = c.get(&theirs).header("cookie", &mine).send().await.unwrap();
    assert_eq!(r.status(), 401, "another browser's state");

    // A wrong password stays at the provider.
    assert!(to_callback(&c, &gd.url, "operator@factory.example", "wrong").await.is_err());

    // Someone the provider signs in but --oidc-allowed-email does not let in.
    let (back, state) = to_callback(&c, &gd.url, "visitor@elsewhere.example", "visitor-password-2").await.unwrap();
    let r = c.get(&back).header("cookie", &state).send().await.unwrap();
    assert_eq!(r.status(), 403);
    assert!(set_cookie(&r, "gpudash_session").is_none());
    assert!(r.text().await.unwrap().contains("visitor@elsewhere.example may not use this gpudash"));

    // The provider says no (the person cancelled).
    let r = c
        .get(format!("{callback}?error=access_denied&error_description=the+user+cancelled&state=x"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    assert!(r.text().await.unwrap().contains("the user cancelled"));
}

/// gpudash starts while the provider is down, and says so to whoever tries to sign in; flags
/// that do not go together are refused at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_that_is_down_is_said_and_bad_flags_are_refused() {
    let port = free_port();
    let dead = format!("http://127.0.0.1:{}/", free_port());
    let callback = format!("http://127.0.0.1:{port}/login/oidc/callback");
    let (gd, dir) = site(port, &dead, &[]).await.unwrap();
    let secret = dir.path().join("secret").display().to_string();
    let r = client().get(format!("{}/login/oidc", gd.url)).send().await.unwrap();
    assert_eq!(r.status(), 502);
    assert!(r.text().await.unwrap().contains("the identity provider could not be used"));
    for (args, says) in [
        (vec!["--oidc-issuer", "http://id.example.com/"], "go together"),
        (
            vec![
                "--oidc-issuer",
                "http://id.example.com/",
                "--oidc-client-id",
                "g",
                "--oidc-client-secret-file",
                &secret,
                "--oidc-redirect-url",
                &callback,
            ],
            "must be https://",
        ),
    ] {
        let mut all = vec!["serve", "--demo"];
        all.extend(args);
        let out = std::process::Command::new(gpudash_tests::bin()).args(&all).output().unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{err}");
    }
}

/// In headless Chromium, as a person does it: the overview sends them to sign in, the button to
/// the provider's login page, and back on gpudash the overview opens signed in. (Here the
/// provider and gpudash are one site, 127.0.0.1: the cross-site case the callback's own page is
/// for — a `SameSite=Strict` cookie set on a cross-site redirect — is not played; the same
/// flow with a redirect instead of that page passed too.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_signs_in_through_the_provider_in_chromium() {
    use fantoccini::Locator;
    let port = free_port();
    let callback = format!("http://127.0.0.1:{port}/login/oidc/callback");
    let op = provider(&callback).await.unwrap();
    let (gd, _dir) = site(port, &op.issuer, &[]).await.unwrap();
    let url = gd.url.clone();
    gpudash_tests::with_browser(|c| async move {
        c.goto(&format!("{url}/")).await?;
        c.wait().for_element(Locator::Css("a[href$='/login/oidc']")).await?.click().await?;
        c.wait().for_element(Locator::Css("input#username")).await?.send_keys("operator@factory.example").await?;
        c.find(Locator::Css("input#password")).await?.send_keys("operator-password-1").await?;
        c.find(Locator::Css("button[type=submit]")).await?.click().await?;
        gpudash_tests::browser::wait_text(&c, "h1", "GPU overview", Duration::from_secs(15)).await?;
        let at = c.current_url().await?;
        assert_eq!(at.as_str(), format!("{url}/"), "back on gpudash's overview");
        gpudash_tests::browser::shot(&c, "oidc-signed-in.png").await?;
        Ok(())
    })
    .await
    .unwrap();
}
