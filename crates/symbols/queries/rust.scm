; Rust definitions. `@def.<kind>` marks the definition node, `@name` its name.
; Functions inside impl/trait blocks become methods (decided in extract.rs).
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(impl_item type: (_) @name) @def.impl
(type_item name: (type_identifier) @name) @def.type
(associated_type name: (type_identifier) @name) @def.type
(const_item name: (identifier) @name) @def.const
(static_item name: (identifier) @name) @def.static
(mod_item name: (identifier) @name) @def.module
(macro_definition name: (identifier) @name) @def.macro
