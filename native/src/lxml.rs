//! lxml's tree as libxml2 built it, read in place: the only `unsafe` code of the HTML walk
//! (`html.rs` reads the tree through [`Node`] and [`Attr`] alone).
//!
//! It reads lxml's element (`struct LxmlElement` of lxml's `etree.h`) and libxml2's nodes
//! (`xmlNode`, `xmlAttr` of `libxml/tree.h`, stable public ABI) directly, without linking either:
//! the structs are declared here `#[repr(C)]` up to the last field read. The caller
//! (`scrapy_simhash/text/native.py`) builds a walker only on lxml / libxml2 versions whose layout
//! was verified, and [`root`] checks that the element's node points back to the element (lxml
//! keeps the proxy in `_private`).
//!
//! The invariant every [`Node`] and [`Attr`] carries: it is a node of the tree of a root element
//! that a `&'t Bound` reference keeps alive (the element keeps its document alive), read with the
//! GIL held, and nothing changes the tree during `'t`: the walk calls back into Python only for
//! the rules' predicates (regular expressions over strings), which never touch a tree.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::marker::PhantomData;
use std::ptr::NonNull;

use pyo3::prelude::*;

#[repr(C)]
struct XmlNode {
    private: *mut c_void,
    typ: c_int,
    name: *const c_char,
    children: *mut XmlNode,
    last: *mut XmlNode,
    parent: *mut XmlNode,
    next: *mut XmlNode,
    prev: *mut XmlNode,
    doc: *mut c_void,
    ns: *mut c_void,
    content: *const c_char,
    properties: *mut XmlAttr,
}

#[repr(C)]
struct XmlAttr {
    private: *mut c_void,
    typ: c_int,
    name: *const c_char,
    children: *mut XmlNode,
    last: *mut XmlNode,
    parent: *mut XmlNode,
    next: *mut XmlAttr,
    prev: *mut XmlAttr,
    doc: *mut c_void,
    ns: *mut c_void,
}

/// lxml's `struct LxmlElement { PyObject_HEAD; _doc; _c_node; _tag }`.
#[repr(C)]
struct LxmlElement {
    head: pyo3::ffi::PyObject,
    doc: *mut c_void,
    c_node: *mut XmlNode,
}

pub const ELEMENT: c_int = 1;
pub const ATTRIBUTE: c_int = 2;
pub const TEXT: c_int = 3;
pub const CDATA: c_int = 4;
pub const ENTITY_REF: c_int = 5;
pub const PI: c_int = 7;
pub const COMMENT: c_int = 8;
pub const XINCLUDE_START: c_int = 19;
pub const XINCLUDE_END: c_int = 20;

/// A node of a tree alive for `'t` (see the module's invariant).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Node<'t>(NonNull<XmlNode>, PhantomData<&'t XmlNode>);

/// An attribute of a [`Node`]'s element, alive as long.
#[derive(Clone, Copy)]
pub struct Attr<'t>(NonNull<XmlAttr>, PhantomData<&'t XmlAttr>);

/// A node pointer of the tree (null: `None`).
fn node<'t>(p: *mut XmlNode) -> Option<Node<'t>> {
    NonNull::new(p).map(|p| Node(p, PhantomData))
}

/// A name or content of the tree: its bytes up to the NUL (`b""` for null).
fn bytes<'t>(p: *const c_char) -> &'t [u8] {
    if p.is_null() {
        return b"";
    }
    // SAFETY: a non-null name or content pointer of a node of the tree is a NUL-terminated
    // string that libxml2 keeps as long as the node (the module's invariant: 't).
    unsafe { CStr::from_ptr(p).to_bytes() }
}

/// The node of root element `root` (an instance of the exact lxml class the caller verified);
/// `Err` when its node does not point back to it (not an element of the verified layout).
pub fn root<'t>(root: &'t Bound<'_, PyAny>) -> Result<Node<'t>, &'static str> {
    // SAFETY: the caller checked that `root` is an instance of lxml's `_Element` (or a subclass
    // that only adds fields after it) on an lxml whose struct layout was verified, so the object
    // starts with `LxmlElement`; `&'t Bound` keeps it (and its document) alive and the GIL is held.
    // The node is read only after its back pointer (`_private`) shows it is this element's.
    unsafe {
        let element = root.as_ptr() as *const LxmlElement;
        let node = (*element).c_node;
        if node.is_null() || (*node).private != element as *mut c_void || (*node).typ != ELEMENT {
            return Err("not an lxml element of the verified layout (its node does not point back to it)");
        }
        Ok(Node(NonNull::new_unchecked(node), PhantomData))
    }
}

impl<'t> Node<'t> {
    fn get(self) -> &'t XmlNode {
        // SAFETY: a node of a live tree that nothing changes during 't (the module's invariant).
        unsafe { self.0.as_ref() }
    }

    /// libxml2's node type (`ELEMENT`, `TEXT`...).
    #[inline]
    pub fn kind(self) -> c_int {
        self.get().typ
    }

    /// The node's name (an element's tag).
    #[inline]
    pub fn name(self) -> &'t [u8] {
        bytes(self.get().name)
    }

    /// The address of the node's name: libxml2 interns the names of a document, so that equal
    /// addresses are equal names (a key for a cache of what a name means).
    #[inline]
    pub fn name_key(self) -> usize {
        self.get().name as usize
    }

    /// Whether the node has a namespace.
    #[inline]
    pub fn has_ns(self) -> bool {
        !self.get().ns.is_null()
    }

    /// A text node's content.
    #[inline]
    pub fn content(self) -> &'t [u8] {
        bytes(self.get().content)
    }

    #[inline]
    pub fn children(self) -> Option<Node<'t>> {
        node(self.get().children)
    }

    #[inline]
    pub fn parent(self) -> Option<Node<'t>> {
        node(self.get().parent)
    }

    #[inline]
    pub fn next(self) -> Option<Node<'t>> {
        node(self.get().next)
    }

    #[inline]
    pub fn prev(self) -> Option<Node<'t>> {
        node(self.get().prev)
    }

    /// The element's first attribute.
    #[inline]
    pub fn attrs(self) -> Option<Attr<'t>> {
        NonNull::new(self.get().properties).map(|p| Attr(p, PhantomData))
    }

    /// Whether the element is a <p> or <br> without namespace: its name read in place, without
    /// measuring it.
    #[inline]
    pub fn is_paragraph(self) -> bool {
        let n = self.get();
        let p = n.name as *const u8;
        if p.is_null() || !n.ns.is_null() {
            return false;
        }
        // SAFETY: `p` is the node's NUL-terminated name: each byte read is at most the NUL's
        // position (a byte is read only after the one before it was not NUL).
        unsafe {
            match *p {
                b'p' => *p.add(1) == 0,
                b'b' => *p.add(1) == b'r' && *p.add(2) == 0,
                _ => false,
            }
        }
    }
}

impl<'t> Attr<'t> {
    fn get(self) -> &'t XmlAttr {
        // SAFETY: an attribute of a live tree that nothing changes during 't (the module's invariant).
        unsafe { self.0.as_ref() }
    }

    #[inline]
    pub fn kind(self) -> c_int {
        self.get().typ
    }

    #[inline]
    pub fn has_ns(self) -> bool {
        !self.get().ns.is_null()
    }

    /// The address of the attribute's name (see [`Node::name_key`]).
    #[inline]
    pub fn name_key(self) -> usize {
        self.get().name as usize
    }

    #[inline]
    pub fn name(self) -> &'t [u8] {
        bytes(self.get().name)
    }

    /// The first node of the attribute's value.
    #[inline]
    pub fn children(self) -> Option<Node<'t>> {
        node(self.get().children)
    }

    /// The element's next attribute.
    #[inline]
    pub fn next(self) -> Option<Attr<'t>> {
        NonNull::new(self.get().next).map(|p| Attr(p, PhantomData))
    }
}
