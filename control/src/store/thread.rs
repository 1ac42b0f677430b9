//! The store's own thread. SQLite calls block, so async code never makes them
//! on a runtime thread: it sends a closure here and awaits the answer. One
//! thread, one connection: the store has exactly one writer (ARCHITECTURE §3).

use std::sync::mpsc;

use tokio::sync::oneshot;

use super::{Store, StoreError};

type Job = Box<dyn FnOnce(&mut Store) + Send>;

/// A cloneable handle to the store thread.
#[derive(Clone)]
pub struct StoreHandle {
    jobs: mpsc::Sender<Job>,
}

impl StoreHandle {
    /// Moves `store` onto a thread of its own. The thread ends when every
    /// handle is dropped.
    pub fn spawn(mut store: Store) -> std::io::Result<Self> {
        let (jobs, inbox) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("collegium-store".into())
            .spawn(move || {
                for job in inbox {
                    job(&mut store);
                }
            })?;
        Ok(Self { jobs })
    }

    /// Runs `f` on the store thread and returns its result.
    pub async fn call<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Store) -> Result<T, StoreError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Box::new(move |store| {
                // The caller may have gone away; its answer is then unwanted.
                let _ = reply.send(f(store));
            }))
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}
