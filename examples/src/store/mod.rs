//! The in-memory store.

#[derive(Debug, Clone, PartialEq)]
pub struct Todo {
    pub id: u64,
    pub title: String,
    pub done: bool,
}

#[derive(Debug, Default)]
pub struct Store {
    todos: Vec<Todo>,
}

impl Store {
    pub fn insert(&mut self, title: &str) -> Todo {
        let todo = Todo { id: self.todos.len() as u64 + 1, title: title.to_owned(), done: false };
        self.todos.push(todo.clone());
        todo
    }

    pub fn len(&self) -> usize {
        self.todos.len()
    }
}
